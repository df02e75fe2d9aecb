import type { RouteDeclaration } from '../shared/route.js';
import { MAX_IMPORT_REQUEST_BYTES } from './limits.js';

/**
 * The contact imports' routes (shared/route.ts says what a declaration holds; docs.ts has their
 * words). The rows are imported off the request path, by the `import-contacts` worker (workers.ts).
 */

const answers = () => import('./answers.js');
const model = () => import('./model.js');
const shapes = () => import('../shared/answers.js');

// The segments named (BatchGetItem), the topics and properties (Query of their partitions), the
// import (PutItem), its file (s3:PutObject; HeadObject, granted as s3:GetObject, for an upload's),
// and its first step (SendMessage).
export const createContactImportRoute = {
  handler: 'create-contact-import',
  method: 'POST',
  path: '/v1/contacts/imports',
  permission: 'full_access',
  summary: 'Import contacts from a CSV file (a form, or one of our uploads)',
  body: { type: 'multipart', maxBytes: MAX_IMPORT_REQUEST_BYTES },
  ok: [201],
  errors: [413],
  schemas: async () => ({
    body: (await model()).createFromUploadSchema,
    formJsonSchema: (await answers()).formSchema,
    answer: (await answers()).importReferenceSchema,
  }),
  access: {
    env: ['CONTENT_BUCKET', 'CONTACT_IMPORT_QUEUE_URL'],
    actions: ['BatchGetItem', 'Query', 'PutItem'],
    content: { 'imports/': ['s3:PutObject', 's3:GetObject'] },
    contactImportQueue: ['SendMessage'],
  },
} as const satisfies RouteDeclaration;

export const listContactImportsRoute = {
  handler: 'list-contact-imports',
  method: 'GET',
  path: '/v1/contacts/imports',
  permission: 'full_access',
  summary: 'List contact imports, newest first',
  schemas: async () => ({
    query: (await model()).listImportsQuerySchema,
    answer: (await shapes()).listOf((await answers()).contactImportSchema),
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

export const getContactImportRoute = {
  handler: 'get-contact-import',
  method: 'GET',
  path: '/v1/contacts/imports/{id}',
  permission: 'full_access',
  summary: 'Retrieve a contact import: its status and counts',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).contactImportSchema }),
  access: { actions: ['GetItem'] },
} as const satisfies RouteDeclaration;

// Ours: a presigned PUT (signed with the function's own s3:PutObject on `imports/`).
export const createContactImportUploadRoute = {
  handler: 'create-contact-import-upload',
  method: 'POST',
  path: '/v1/contacts/imports/uploads',
  permission: 'full_access',
  summary: 'Start an upload of a large CSV file to import (ours)',
  body: { type: 'json', optional: true },
  ok: [201],
  schemas: async () => ({ answer: (await answers()).importUploadSchema }),
  access: { env: ['CONTENT_BUCKET'], content: { 'imports/': ['s3:PutObject'] } },
} as const satisfies RouteDeclaration;

export const CONTACT_IMPORT_ROUTES = [
  createContactImportRoute,
  listContactImportsRoute,
  getContactImportRoute,
  createContactImportUploadRoute,
] as const satisfies readonly RouteDeclaration[];

import type { RouteDeclaration } from '../shared/route.js';

/**
 * The receiving routes (shared/route.ts says what a declaration holds; docs.ts has their words and
 * examples). Their paths share `/v1/emails/{id}`'s shape: API Gateway and the local gateway take the
 * literal `receiving` before the variable (routes.ts rankRoutes), so `/v1/emails/receiving` is never
 * an email id. Each reads the received email's item (GetItem; the list one Query of its partition);
 * the others read its objects under `received/` and presign download links with their own GetObject.
 */

const answers = () => import('./answers.js');
const reads = () => import('./reads.js');

export const listReceivedEmailsRoute = {
  handler: 'list-received-emails',
  method: 'GET',
  path: '/v1/emails/receiving',
  permission: 'full_access',
  summary: 'List received emails, newest first',
  schemas: async () => ({
    query: (await reads()).listReceivedEmailsQuerySchema,
    answer: (await answers()).receivedEmailListSchema,
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

// Its bodies and headers (parsed.json) and inline images (attachments) are read from the content
// bucket; the raw message's link is presigned.
export const getReceivedEmailRoute = {
  handler: 'get-received-email',
  method: 'GET',
  path: '/v1/emails/receiving/{id}',
  permission: 'full_access',
  summary: 'Retrieve one received email',
  errors: [404],
  schemas: async () => ({
    query: (await reads()).getReceivedEmailQuerySchema,
    answer: (await answers()).receivedEmailSchema,
  }),
  access: {
    env: ['CONTENT_BUCKET'],
    optionalEnv: ['RECEIVED_VIRUS_DOWNLOADS'],
    actions: ['GetItem'],
    content: { 'received/': ['s3:GetObject'] },
  },
} as const satisfies RouteDeclaration;

export const listReceivedAttachmentsRoute = {
  handler: 'list-received-attachments',
  method: 'GET',
  path: '/v1/emails/receiving/{id}/attachments',
  permission: 'full_access',
  summary: "List a received email's attachments, with download links",
  errors: [404],
  schemas: async () => ({
    query: (await reads()).listReceivedAttachmentsQuerySchema,
    answer: (await answers()).receivedAttachmentListSchema,
  }),
  access: {
    env: ['CONTENT_BUCKET'],
    optionalEnv: ['RECEIVED_VIRUS_DOWNLOADS'],
    actions: ['GetItem'],
    content: { 'received/': ['s3:GetObject'] },
  },
} as const satisfies RouteDeclaration;

export const getReceivedAttachmentRoute = {
  handler: 'get-received-attachment',
  method: 'GET',
  path: '/v1/emails/receiving/{id}/attachments/{attachment_id}',
  permission: 'full_access',
  summary: 'Retrieve one attachment of a received email, with a download link',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).receivedAttachmentSchema }),
  access: {
    env: ['CONTENT_BUCKET'],
    optionalEnv: ['RECEIVED_VIRUS_DOWNLOADS'],
    actions: ['GetItem'],
    content: { 'received/': ['s3:GetObject'] },
  },
} as const satisfies RouteDeclaration;

export const RECEIVING_ROUTES = [
  listReceivedEmailsRoute,
  getReceivedEmailRoute,
  listReceivedAttachmentsRoute,
  getReceivedAttachmentRoute,
] as const;

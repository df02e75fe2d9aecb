import type { WorkerSpec } from '../shared/function-spec.js';

/** The contact-imports background functions (issue 40; shared/function-spec.ts). */
export const CONTACT_IMPORT_WORKERS = {
  // The import (GetItem, strongly consistent), the chunk's contacts (BatchGetItem), the file from
  // its checkpoint (s3:GetObject with a Range), then each chunk in one TransactWriteItems, granted
  // as its writes' own actions: the contacts, id items, memberships and choices (PutItem) and the
  // checkpoint (UpdateItem): AWS's "Using IAM with DynamoDB transactions" (a transaction's Put and
  // Update are governed by PutItem's and UpdateItem's permissions). A step that stops before its time is up sends the next (SendMessage);
  // receiving and deleting are the event source's.
  'import-contacts': {
    description: 'Imports a CSV file of contacts, a step a message, each chunk committed with its checkpoint',
    env: ['TABLE_NAME', 'CONTENT_BUCKET', 'CONTACT_IMPORT_QUEUE_URL'],
    table: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem'] },
    content: { 'imports/': ['s3:GetObject'] },
    contactImportQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;

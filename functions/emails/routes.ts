import { MAX_BATCH_BODY_BYTES, MAX_SEND_REQUEST_BYTES } from '../shared/limits.js';
import type { RouteDeclaration } from '../shared/route.js';

/**
 * The emails' routes (shared/route.ts says what a declaration holds; docs.ts has their words and
 * examples). Each function's access: see the comment on its `access`.
 */

const answers = () => import('./answers.js');
const lists = async () => (await import('../shared/answers.js')).listOf;

// The email's items and its idempotency key (claimed with PutItem, given back with DeleteItem);
// the sender's domain and an email read back after a failed store (GetItem). Attachments and
// large bodies go to the content bucket before the email is stored.
export const sendEmailRoute = {
  handler: 'send-email',
  method: 'POST',
  path: '/v1/emails',
  permission: 'sending_access',
  summary: 'Send an email',
  body: { type: 'json', maxBytes: MAX_SEND_REQUEST_BYTES },
  errors: [409],
  schemas: async () => ({
    body: (await import('./email.js')).sendEmailSchema,
    bodyJsonSchema: (await import('./send-bodies.js')).sendBodyJsonSchema,
    answer: (await answers()).sentEmailSchema,
  }),
  access: {
    env: ['SEND_QUEUE_URL', 'CONTENT_BUCKET', 'DEFLATE_BODIES'],
    optionalEnv: ['ATTACHMENT_ALLOW_LOOPBACK', 'TEMPLATE_CACHE_TTL_MS'],
    actions: ['BatchWriteItem', 'PutItem', 'DeleteItem', 'GetItem'],
    sendQueue: ['SendMessage'],
    content: { 'attachments/': ['s3:PutObject'], 'bodies/': ['s3:PutObject'] },
  },
} as const satisfies RouteDeclaration;

export const sendBatchRoute = {
  handler: 'send-batch',
  method: 'POST',
  path: '/v1/emails/batch',
  permission: 'sending_access',
  summary: 'Send up to 100 emails at once',
  body: { type: 'json', maxBytes: MAX_BATCH_BODY_BYTES },
  errors: [409],
  schemas: async () => ({
    bodyJsonSchema: (await import('./send-bodies.js')).batchBodyJsonSchema,
    answer: (await answers()).sentBatchSchema,
  }),
  access: {
    env: ['SEND_QUEUE_URL', 'DEFLATE_BODIES'],
    optionalEnv: ['TEMPLATE_CACHE_TTL_MS'],
    actions: ['BatchWriteItem', 'BatchGetItem', 'PutItem', 'DeleteItem', 'GetItem'],
    sendQueue: ['SendMessage'],
  },
} as const satisfies RouteDeclaration;

export const listEmailsRoute = {
  handler: 'list-emails',
  method: 'GET',
  path: '/v1/emails',
  permission: 'full_access',
  summary: 'List sent emails, newest first',
  // 503: a search before the table has its search index (upgrade step 1).
  errors: [503],
  schemas: async () => ({
    query: (await import('./list-query.js')).listEmailsQuerySchema,
    answer: (await answers()).emailPageSchema,
  }),
  access: {
    actions: ['Query', 'BatchGetItem'],
    indexes: ['emailsByTime', 'emailsByStatus', 'emailsBySearch'],
  },
} as const satisfies RouteDeclaration;

// Large bodies are read back from the content bucket.
export const getEmailRoute = {
  handler: 'get-email',
  method: 'GET',
  path: '/v1/emails/{id}',
  permission: 'full_access',
  summary: 'Retrieve one email',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).emailSchema }),
  access: { env: ['CONTENT_BUCKET'], actions: ['Query'], content: { 'bodies/': ['s3:GetObject'] } },
} as const satisfies RouteDeclaration;

// A scheduled email's status item: read (GetItem), moved or ended with a conditional write
// (UpdateItem); one due within the scheduler's look-ahead is queued (SendMessage, delayed).
export const updateEmailRoute = {
  handler: 'update-email',
  method: 'PATCH',
  path: '/v1/emails/{id}',
  permission: 'full_access',
  summary: 'Reschedule a scheduled email',
  body: { type: 'json' },
  errors: [404],
  schemas: async () => ({
    body: (await import('./reschedule-request.js')).updateEmailSchema,
    answer: (await answers()).emailReferenceSchema,
  }),
  access: {
    env: ['SEND_QUEUE_URL'],
    actions: ['GetItem', 'UpdateItem', 'Query'],
    sendQueue: ['SendMessage'],
  },
} as const satisfies RouteDeclaration;

export const cancelEmailRoute = {
  handler: 'cancel-email',
  method: 'POST',
  path: '/v1/emails/{id}/cancel',
  permission: 'full_access',
  summary: 'Cancel a scheduled email',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).emailReferenceSchema }),
  access: { actions: ['GetItem', 'UpdateItem'] },
} as const satisfies RouteDeclaration;

// The email's attachment records (GetItem of its body item); download links are presigned with
// the function's own GetObject.
export const listAttachmentsRoute = {
  handler: 'list-attachments',
  method: 'GET',
  path: '/v1/emails/{id}/attachments',
  permission: 'full_access',
  summary: "List an email's attachments, with download links",
  errors: [404],
  schemas: async () => ({
    query: (await import('./attachments.js')).listAttachmentsQuerySchema,
    answer: (await lists())((await answers()).attachmentSchema),
  }),
  access: {
    env: ['CONTENT_BUCKET'],
    actions: ['GetItem'],
    content: { 'attachments/': ['s3:GetObject'] },
  },
} as const satisfies RouteDeclaration;

export const getAttachmentRoute = {
  handler: 'get-attachment',
  method: 'GET',
  path: '/v1/emails/{id}/attachments/{attachment_id}',
  permission: 'full_access',
  summary: 'Retrieve one attachment, with a download link',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).attachmentSchema }),
  access: {
    env: ['CONTENT_BUCKET'],
    actions: ['GetItem'],
    content: { 'attachments/': ['s3:GetObject'] },
  },
} as const satisfies RouteDeclaration;

// The link is one PutItem under its token's hash; the email must exist (Query of its items).
export const shareEmailRoute = {
  handler: 'share-email',
  method: 'POST',
  path: '/v1/emails/{id}/share',
  permission: 'full_access',
  summary: 'Share an email: a link to a read-only page of it, for up to 48 hours',
  body: { type: 'json', optional: true },
  errors: [404],
  schemas: async () => ({
    body: (await import('./share.js')).shareEmailSchema,
    answer: (await answers()).sharedEmailSchema,
  }),
  access: { actions: ['Query', 'PutItem'] },
} as const satisfies RouteDeclaration;

// No key: the token is the credential (a `token` route, http/token.ts). One UpdateItem of the
// link's item counts the view and answers the email's id; a GetItem only when it is refused (a
// new minute, or a link expired, unknown or throttled), then a second UpdateItem to start the
// minute. The email as GET /v1/emails/{id} reads it.
export const getSharedEmailRoute = {
  handler: 'get-shared-email',
  method: 'GET',
  path: '/share/{token}',
  permission: 'token',
  summary: 'A shared email: a read-only page, opened by its link without a key until it expires',
  page: { type: 'text/html', notFound: true },
  errors: [404, 429],
  access: {
    env: ['CONTENT_BUCKET'],
    actions: ['UpdateItem', 'GetItem', 'Query'],
    content: { 'bodies/': ['s3:GetObject'] },
  },
} as const satisfies RouteDeclaration;

export const EMAIL_ROUTES = [
  sendEmailRoute,
  sendBatchRoute,
  listEmailsRoute,
  getEmailRoute,
  updateEmailRoute,
  cancelEmailRoute,
  listAttachmentsRoute,
  getAttachmentRoute,
  shareEmailRoute,
  getSharedEmailRoute,
] as const;

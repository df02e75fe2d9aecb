import type * as z from 'zod/mini';
import { createApiKeySchema, updateApiKeySchema } from '../core/api-keys.js';
import { listAttachmentsQuerySchema } from '../core/attachments.js';
import { createDomainSchema, listDomainsQuerySchema, updateDomainSchema } from '../core/domains.js';
import { sendEmailSchema } from '../core/email.js';
import { listEmailsQuerySchema } from '../core/list.js';
import {
  addSuppressionSchema,
  batchAddSuppressionsSchema,
  batchRemoveSuppressionsSchema,
  listSuppressionsQuerySchema,
} from '../core/suppressions.js';
import {
  createTemplateSchema,
  listTemplatesQuerySchema,
  templateRefSchema,
  updateTemplateSchema,
} from '../core/templates.js';
import {
  createWebhookSchema,
  listAttemptsQuerySchema,
  listMessagesQuerySchema,
  listWebhooksQuerySchema,
  updateWebhookSchema,
} from '../core/webhooks.js';
import { sentEmailSchema } from './schemas.js';

/**
 * What the OpenAPI document says of each route of the route table beyond its method, path,
 * summary and permission (routes.ts): the schemas its handler validates its query and body with
 * (the very objects it imports), its answer, and the error statuses it may answer besides the ones
 * every authenticated route may (document.ts, COMMON_ERRORS).
 */
export interface Operation {
  /** The handler's query schema (each of its properties one query parameter). */
  readonly query?: z.ZodMiniType;
  /** The handler's body schema (JSON). */
  readonly body?: z.ZodMiniType;
  /** The body's JSON schema, when it is not one zod schema (a send by template or not; a batch). */
  readonly bodyJsonSchema?: () => Record<string, unknown>;
  /** Headers the route reads, besides Authorization. */
  readonly headers?: readonly { name: string; description: string; schema: Record<string, unknown> }[];
  /** The successful answer. */
  readonly ok: {
    readonly status: 200 | 201;
    readonly description: string;
    /** Its schema (from schemas.ts, registered as a component where it is shared). */
    readonly schema: z.ZodMiniType;
    readonly example?: unknown;
  };
  /** Error statuses this route answers beyond the common ones (404 for a route with an id, 409 …). */
  readonly errors?: readonly number[];
  readonly requestExample?: unknown;
  /** More words than the summary: rules, limits, what is ours beside Resend's. */
  readonly description?: string;
}

/** Every API route's operation, by handler. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  'send-email': {
    body: sendEmailSchema,
    headers: [
      {
        name: 'Idempotency-Key',
        description: 'The same key and body within 24 hours give the same email (at most 256 characters).',
        schema: { type: 'string', maxLength: 256 },
      },
    ],
    ok: {
      status: 200,
      description: 'Accepted: stored and queued (or scheduled).',
      schema: sentEmailSchema,
      example: {
        id: 'em_01m80mv90eew9ryfvqd1ksnhes',
        status: 'queued',
        created_at: '2026-11-22T03:29:55.214Z',
      },
    },
    errors: [409],
    requestExample: {
      from: 'Acme <hello@acme.test>',
      to: ['someone@example.com'],
      subject: 'Hello',
      html: '<p>Hello</p>',
    },
  },
};

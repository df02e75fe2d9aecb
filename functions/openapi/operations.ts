import * as z from 'zod/mini';
import { createApiKeySchema, listApiKeysQuerySchema, updateApiKeySchema } from '../api-keys/requests.js';
import { createDomainSchema, listDomainsQuerySchema, updateDomainSchema } from '../domains/model.js';
import { listAttachmentsQuerySchema } from '../emails/attachments.js';
import { MAX_BATCH, MAX_BATCH_BODY_BYTES } from '../emails/batch.js';
import { MAX_RECIPIENTS, sendEmailSchema, updateEmailSchema } from '../emails/email.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../emails/idempotency.js';
import { listEmailsQuerySchema } from '../emails/list-query.js';
import { emailMetricsQuerySchema, emailMetricsResponseSchema } from '../metrics/model.js';
import { listLogsQuerySchema, logListResponseSchema, logResponseSchema } from '../request-logs/reads.js';
import { MAX_EMAIL_BYTES, MAX_SCHEDULE_DAYS, MAX_SEND_REQUEST_BYTES } from '../shared/limits.js';
import {
  addSuppressionSchema,
  batchAddSuppressionsSchema,
  batchRemoveSuppressionsSchema,
  listSuppressionsQuerySchema,
  MAX_SUPPRESSION_BATCH,
} from '../suppressions/model.js';
import {
  createTemplateSchema,
  listTemplatesQuerySchema,
  templateRefSchema,
  updateTemplateSchema,
} from '../templates/model.js';
import { MAX_TEMPLATE_VARIABLES } from '../templates/render.js';
import {
  createWebhookSchema,
  listAttemptsQuerySchema,
  listMessagesQuerySchema,
  listWebhooksQuerySchema,
  MAX_WEBHOOKS,
  updateWebhookSchema,
} from '../webhooks/model.js';
import {
  apiKeyReferenceSchema,
  apiKeySchema,
  attachmentSchema,
  createdApiKeySchema,
  deletion,
  domainReferenceSchema,
  domainSchema,
  emailListItemSchema,
  emailReferenceSchema,
  emailSchema,
  listOf,
  named,
  sentBatchSchema,
  sentEmailSchema,
  suppressionListItemSchema,
  suppressionRemovedSchema,
  suppressionSchema,
  suppressionsAddedSchema,
  suppressionsRemovedSchema,
  templateListItemSchema,
  templateReferenceSchema,
  templateSchema,
  webhookAttemptSchema,
  webhookEventReferenceSchema,
  webhookListItemSchema,
  webhookMessageListItemSchema,
  webhookMessageSchema,
  webhookReferenceSchema,
  webhookSchema,
  webhookSecretSchema,
} from './schemas.js';

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
    /** Other success statuses with the same answer (add-suppression: 201 added, 200 already there). */
    readonly alsoStatuses?: readonly (200 | 201)[];
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

type Json = Record<string, unknown>;

/** A request schema as JSON Schema (what document.ts makes of `body`), to build a body from. */
const inputJson = (schema: z.ZodMiniType): Json => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as Json;
  return rest;
};

/**
 * A send's body, in its two forms: its own content (sendEmailSchema), or a template's (the same
 * fields, `template` instead of html and text, and `from` and `subject` taken from the template
 * where left out: templates/templates.ts applyTemplate). A batch's emails take no attachments.
 */
function sendBodies(inBatch: boolean): Json[] {
  const plain = inputJson(sendEmailSchema) as Json & { properties: Record<string, Json> };
  const { attachments, ...withoutFiles } = plain.properties;
  const properties: Record<string, Json> = inBatch
    ? withoutFiles
    : { ...withoutFiles, attachments: attachments as Json };
  const { html: _html, text: _text, ...rest } = properties;
  return [
    {
      ...plain,
      title: 'Send with its own content',
      properties,
      anyOf: [{ required: ['html'] }, { required: ['text'] }],
    },
    {
      ...plain,
      title: 'Send with a template',
      description:
        "`template` gives the bodies (its published version, rendered with `variables`), and `from`, `subject` and `reply_to` where the email leaves them out; `html` and `text` may not be given beside it. Ours and Resend's.",
      properties: { ...rest, template: inputJson(templateRefSchema) },
      required: ['to', 'template'],
    },
  ];
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  description: `The same key and body within 24 hours give the same answer, without sending again; the same key with another body is a 409 (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters).`,
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
};

const T0 = '2026-11-22T03:29:55.214Z';
const T1 = '2026-11-22T03:29:57.931Z';
const T2 = '2026-11-22T04:12:08.402Z';
const EMAIL_ID = 'em_01m80mv90eew9ryfvqd1ksnhes';
const DOMAIN_ID = 'dom_01m7zq4c1pe8n0tr3ww5yq2kd6';
const TEMPLATE_ID = 'tpl_01m80hz2b7ed3s6h0c9yb1q4tm';
const KEY_ID = 'key_01m80ftx0gfbk2rmwe7pqv5n3a';
const SUPPRESSION_ID = 'sup_01m80q2w7hf4yqcz1rj0xm8bve';
const WEBHOOK_ID = 'wh_01m80g6k2sexmbvq9w3t0p7jrh';
const MESSAGE_ID = 'msg_01m80mv9cb3ma1x6fe2wz9qk0d';
const ATTACHMENT_ID = '6b0d7e71-3f4c-9a2e-8d15-0c2f4b7a9e33';

const domainExample = {
  object: 'domain',
  id: DOMAIN_ID,
  name: 'acme.test',
  domain: 'acme.test',
  status: 'pending',
  created_at: T0,
  region: 'eu-west-1',
  open_tracking: false,
  click_tracking: false,
  tls: 'opportunistic',
  capabilities: { sending: 'enabled', receiving: 'disabled' },
  records: [
    {
      record: 'DKIM',
      type: 'CNAME',
      name: 'x3k4bq2t7lbr5ghf6yq2kpmnj3oufrnx._domainkey.acme.test',
      value: 'x3k4bq2t7lbr5ghf6yq2kpmnj3oufrnx.dkim.amazonses.com',
      ttl: 'Auto',
      status: 'pending',
    },
    {
      record: 'SPF',
      type: 'MX',
      name: 'send.acme.test',
      value: 'feedback-smtp.eu-west-1.amazonses.com',
      priority: 10,
      ttl: 'Auto',
      status: 'pending',
    },
    {
      record: 'SPF',
      type: 'TXT',
      name: 'send.acme.test',
      value: 'v=spf1 include:amazonses.com ~all',
      ttl: 'Auto',
      status: 'pending',
    },
  ],
  mail_from_domain: 'send.acme.test',
  dmarc_record: {
    type: 'TXT',
    name: '_dmarc.acme.test',
    value: 'v=DMARC1; p=none;',
    ttl: 'Auto',
    status: 'not_checked',
  },
};

const emailListed = {
  object: 'email',
  id: EMAIL_ID,
  status: 'delivered',
  last_event: 'delivered',
  message_id: '0102019a4f7c2b1e-5d6e7f80-1a2b-4c3d-9e8f-0a1b2c3d4e5f-000000',
  created_at: T0,
  scheduled_at: null,
  from: 'Acme <hello@acme.test>',
  to: ['someone@example.com'],
  cc: [],
  bcc: [],
  reply_to: [],
  subject: 'Your receipt',
};

const templateExample = {
  object: 'template',
  id: TEMPLATE_ID,
  current_version_id: 'tplv_01m80j0d4s8x2f7gkbq3n5w9re',
  name: 'Welcome',
  alias: 'welcome',
  from: 'Acme <hello@acme.test>',
  subject: 'Welcome, {{{NAME}}}',
  reply_to: null,
  html: '<p>Hello {{{NAME}}}</p>',
  text: 'Hello {{{NAME}}}',
  variables: [
    {
      id: 'tvar_01m80hz2b7ed3s6h0c9yb1q4tn',
      key: 'NAME',
      type: 'string',
      fallback_value: 'there',
      created_at: T0,
      updated_at: T0,
    },
  ],
  created_at: T0,
  updated_at: T1,
  status: 'published',
  published_at: T1,
  has_unpublished_versions: false,
};

const page = (data: unknown[], has_more = false) => ({ object: 'list', has_more, data });
const ref = (object: string, id: string) => ({ object, id });
const removed = (object: string, id: string) => ({ object, id, deleted: true });

const LIST =
  'Newest first, in cursor pages: `limit` (1 to 100, default 20), then `after` or `before` an id from a page (or `offset`, at most 10,000).';

const SECRET = 'whsec_MfKQ9r8GKYqXxgmbVj1uRHJcqNSz3pWfT8l2Z6x0aBc=';

function attachmentExample() {
  return {
    object: 'attachment',
    id: ATTACHMENT_ID,
    filename: 'invoice-2026-11.pdf',
    size: 48213,
    content_type: 'application/pdf',
    content_disposition: 'attachment',
    download_url: `https://content.example-bucket.s3.eu-west-1.amazonaws.com/attachments/${EMAIL_ID}/${ATTACHMENT_ID}?X-Amz-Expires=3600&X-Amz-Signature=5f1c`,
    expires_at: '2026-11-22T05:12:08.402Z',
  };
}

function verifiedRecords() {
  return domainExample.records.map((record) => ({ ...record, status: 'verified' }));
}

const webhookListedExample = {
  id: WEBHOOK_ID,
  endpoint: 'https://hooks.acme.test/email',
  events: ['email.delivered', 'email.bounced'],
  status: 'enabled',
  created_at: T0,
};

const messageListedExample = {
  id: MESSAGE_ID,
  type: 'email.delivered',
  created_at: T1,
  status: 'success',
  next_attempt_at: null,
  attempts: 1,
};

/** Every API route's operation, by handler. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  'send-email': {
    body: sendEmailSchema,
    bodyJsonSchema: () => ({ anyOf: sendBodies(false) }),
    headers: [IDEMPOTENCY_KEY],
    ok: {
      status: 200,
      description: 'Accepted: stored and queued (or scheduled).',
      schema: sentEmailSchema,
      example: { id: EMAIL_ID, status: 'queued', created_at: T0 },
    },
    errors: [409],
    requestExample: {
      from: 'Acme <hello@acme.test>',
      to: ['someone@example.com'],
      subject: 'Your receipt',
      html: '<p>Thank you for your order.</p>',
      tags: [{ name: 'category', value: 'receipt' }],
    },
    description: `At most ${MAX_RECIPIENTS} recipients across to, cc and bcc; a body of at most ${MAX_SEND_REQUEST_BYTES / 1024 / 1024} MiB (larger files by \`path\`); \`scheduled_at\` (ISO 8601, or English such as "in 1 hour") at most ${MAX_SCHEDULE_DAYS} days ahead. The sender's domain must be a verified domain of this service (400 otherwise), and a sending key held to a domain may send only from it (403). Ours beside Resend's answer: \`status\`, \`created_at\` (and \`last_event\`, \`scheduled_at\` when scheduled).`,
  },
  'send-batch': {
    bodyJsonSchema: () => ({
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH,
      items: { anyOf: sendBodies(true) },
    }),
    headers: [
      IDEMPOTENCY_KEY,
      {
        name: 'x-batch-validation',
        description:
          '`strict` (the default): one invalid email refuses the whole batch (400, each error named by its position). `permissive`: the valid emails are sent, the others listed in `errors`.',
        schema: { type: 'string', enum: ['strict', 'permissive'], default: 'strict' },
      },
    ],
    ok: {
      status: 200,
      description: "The emails' ids, in input order.",
      schema: sentBatchSchema,
      example: { data: [{ id: EMAIL_ID }, { id: 'em_01m80mv90eew9ryfvqd1ksnhet' }] },
    },
    errors: [409],
    requestExample: [
      { from: 'Acme <hello@acme.test>', to: 'ana@example.com', subject: 'Hello Ana', text: 'Hello Ana' },
      {
        from: 'Acme <hello@acme.test>',
        to: ['bo@example.com'],
        template: { id: 'welcome', variables: { NAME: 'Bo' } },
      },
    ],
    description: `1 to ${MAX_BATCH} emails, each checked as \`POST /v1/emails\` checks one (no attachments; each at most ${MAX_EMAIL_BYTES / 1024} KiB; the body at most ${MAX_BATCH_BODY_BYTES / 1024 / 1024} MiB). One request against the key's rate limit.`,
  },
  'list-emails': {
    query: listEmailsQuerySchema,
    ok: {
      status: 200,
      description: 'A page of emails.',
      schema: listOf(emailListItemSchema),
      example: page([emailListed]),
    },
    description: `${LIST} \`status\` filters (ours).`,
  },
  'get-email-metrics': {
    query: emailMetricsQuerySchema,
    ok: {
      status: 200,
      description:
        "Counts and rates over the range, in Resend's shape: `totals`, and with `dimensions` a row per period and domain.",
      schema: named(
        'EmailMetrics',
        emailMetricsResponseSchema,
        'Email metrics: the counts asked for (sent, delivered, bounced, complained, failed, suppressed, opened, clicked, …) and their rates, over the range, totalled and broken down by the dimensions asked for.',
      ),
      example: {
        object: 'metrics',
        start_date: '2026-11-16T00:00:00.000Z',
        end_date: '2026-11-22T03:29:55.214Z',
        metrics: ['sent', 'delivered', 'bounced', 'bounce_rate'],
        dimensions: ['period'],
        granularity: 'daily',
        totals: { sent: 1200, delivered: 1188, bounced: 6, bounce_rate: 0.005 },
        data: [
          { period: '2026-11-21', sent: 700, delivered: 694, bounced: 4, bounce_rate: 0.0057 },
          { period: '2026-11-22', sent: 500, delivered: 494, bounced: 2, bounce_rate: 0.004 },
        ],
      },
    },
    description:
      'Counted as events are recorded (each once, duplicated or reordered SES events included), by the sender domain. Ranges of up to 90 days; `email` and `broadcast` dimensions are refused (400). A range reaching more than 12 hours the hourly roll-up has not yet summed answers 503 with `Retry-After` (the roll-up is behind; it catches up within minutes). See docs/metrics.md.',
    errors: [503],
  },
  'get-email': {
    ok: {
      status: 200,
      description: 'The email, with its bodies, recipients and delivery events.',
      schema: emailSchema,
      example: {
        ...emailListed,
        html: '<p>Thank you for your order.</p>',
        tags: [{ name: 'category', value: 'receipt' }],
        headers: {},
        sent_at: '2026-11-22T03:29:55.733Z',
        failure_reason: null,
        recipients: [
          {
            email: 'someone@example.com',
            kind: 'to',
            status: 'delivered',
            last_event: 'delivered',
            at: T1,
            detail: '250 2.0.0 OK',
          },
        ],
        events: [
          { type: 'sent', at: '2026-11-22T03:29:55.733Z', recipients: ['someone@example.com'] },
          { type: 'delivered', at: T1, recipients: ['someone@example.com'], detail: '250 2.0.0 OK' },
        ],
      },
    },
    errors: [404],
    description:
      'Attachments have their own route. Bodies kept in the content store past its retention are left out, with `bodies_expired: true`.',
  },
  'update-email': {
    body: updateEmailSchema,
    ok: {
      status: 200,
      description: 'Rescheduled.',
      schema: emailReferenceSchema,
      example: ref('email', EMAIL_ID),
    },
    errors: [404],
    requestExample: { scheduled_at: '2026-11-23T09:00:00.000Z' },
    description: `Only a scheduled email that still waits (400 once it is being sent, sent or canceled); the new time at most ${MAX_SCHEDULE_DAYS} days ahead.`,
  },
  'cancel-email': {
    ok: {
      status: 200,
      description: 'Canceled (again, if it was already): it ends `failed` with `failure_reason: "canceled"`.',
      schema: emailReferenceSchema,
      example: ref('email', EMAIL_ID),
    },
    errors: [404],
    description: 'Only a scheduled email that still waits (400 once it is being sent or sent).',
  },
  'list-attachments': {
    query: listAttachmentsQuerySchema,
    ok: {
      status: 200,
      description: "The email's attachments, in the order sent.",
      schema: listOf(attachmentSchema),
      example: page([attachmentExample()]),
    },
    errors: [404],
    description:
      'All of them when `limit` is absent (as Resend), or a page of `limit` after or before one of them.',
  },
  'get-attachment': {
    ok: {
      status: 200,
      description: 'The attachment, with a download link.',
      schema: attachmentSchema,
      example: attachmentExample(),
    },
    errors: [404],
  },
  'create-domain': {
    body: createDomainSchema,
    ok: {
      status: 201,
      description: 'Added: publish its records.',
      schema: domainSchema,
      example: domainExample,
    },
    errors: [409],
    requestExample: { name: 'acme.test', open_tracking: false, click_tracking: false },
    description:
      "`{domain}` or Resend's `{name}`. `region`, if given, must be the stack's region (400 otherwise). `custom_return_path` is the MAIL FROM subdomain (default `send`). 409 when the domain exists already (here, or as an SES identity this service did not create).",
  },
  'list-domains': {
    query: listDomainsQuerySchema,
    ok: {
      status: 200,
      description: 'A page of domains, with their stored statuses.',
      schema: listOf(domainSchema),
      example: page([domainExample]),
    },
    description: `${LIST} Each domain whole, with its records (Resend lists fewer fields).`,
  },
  'get-domain': {
    ok: {
      status: 200,
      description: 'The domain, its status read fresh from SES.',
      schema: domainSchema,
      example: { ...domainExample, status: 'verified', records: verifiedRecords() },
    },
    errors: [404],
  },
  'verify-domain': {
    ok: {
      status: 200,
      description: 'The domain, its status read from SES now.',
      schema: domainSchema,
      example: { ...domainExample, status: 'verified', records: verifiedRecords() },
    },
    errors: [404],
    description: 'The whole domain (Resend answers `{object, id}` only).',
  },
  'update-domain': {
    body: updateDomainSchema,
    ok: {
      status: 200,
      description: 'Changed.',
      schema: domainReferenceSchema,
      example: ref('domain', DOMAIN_ID),
    },
    errors: [404, 409],
    requestExample: { click_tracking: true, tracking_subdomain: 'links', tls: 'enforced' },
    description:
      'What is left out stays. A tracking subdomain can be changed, never removed. `capabilities` takes only sending enabled and receiving disabled. 409 when other requests change it at the same time.',
  },
  'delete-domain': {
    ok: {
      status: 200,
      description: 'Removed: sending from it stops.',
      schema: deletion('domain'),
      example: removed('domain', DOMAIN_ID),
    },
    errors: [404],
  },
  'create-template': {
    body: createTemplateSchema,
    ok: {
      status: 201,
      description: 'Created, as a draft.',
      schema: templateReferenceSchema,
      example: ref('template', TEMPLATE_ID),
    },
    errors: [409],
    requestExample: {
      name: 'Welcome',
      alias: 'welcome',
      from: 'Acme <hello@acme.test>',
      subject: 'Welcome, {{{NAME}}}',
      html: '<p>Hello {{{NAME}}}</p>',
      variables: [{ key: 'NAME', type: 'string', fallback_value: 'there' }],
    },
    description: `Variables are \`{{{NAME}}}\`, each declared (at most ${MAX_TEMPLATE_VARIABLES}). 409 when the alias is taken.`,
  },
  'list-templates': {
    query: listTemplatesQuerySchema,
    ok: {
      status: 200,
      description: 'A page of templates.',
      schema: listOf(templateListItemSchema),
      example: page([
        {
          id: TEMPLATE_ID,
          name: 'Welcome',
          status: 'published',
          published_at: T1,
          alias: 'welcome',
          created_at: T0,
          updated_at: T1,
        },
      ]),
    },
    description: LIST,
  },
  'get-template': {
    ok: {
      status: 200,
      description: 'The template, its current version.',
      schema: templateSchema,
      example: templateExample,
    },
    errors: [404],
  },
  'update-template': {
    body: updateTemplateSchema,
    ok: {
      status: 200,
      description: 'Changed: a new current version (sends use the published one until the next publish).',
      schema: templateReferenceSchema,
      example: ref('template', TEMPLATE_ID),
    },
    errors: [404, 409],
    requestExample: { subject: 'Welcome aboard, {{{NAME}}}' },
    description:
      'What is left out stays; null removes an optional part. 409 when the alias is taken or other requests change it at the same time.',
  },
  'delete-template': {
    ok: {
      status: 200,
      description: 'Removed: gone for new sends; emails accepted keep what was rendered.',
      schema: deletion('template'),
      example: removed('template', TEMPLATE_ID),
    },
    errors: [404],
  },
  'publish-template': {
    ok: {
      status: 200,
      description: 'Published: sends use this version from now on.',
      schema: templateReferenceSchema,
      example: ref('template', TEMPLATE_ID),
    },
    errors: [404, 409],
  },
  'duplicate-template': {
    ok: {
      status: 200,
      description: 'The copy, a new draft.',
      schema: templateReferenceSchema,
      example: ref('template', 'tpl_01m80r5j9d2q7e4xk0bw6n3cyf'),
    },
    errors: [404],
  },
  'create-api-key': {
    body: createApiKeySchema,
    ok: {
      status: 201,
      description: 'Created: the token is in this answer only.',
      schema: createdApiKeySchema,
      example: { object: 'api_key', id: KEY_ID, token: 'esk_3q9V0mJx7wYp2K5dN8rT1cLg4hB6fZsA0eUiOqWyXvM' },
    },
    requestExample: { name: 'Production sending', permission: 'sending_access', domain_id: DOMAIN_ID },
    description:
      '`permission` defaults to `full_access`; a `sending_access` key may be held to one domain (`domain_id`, which must exist: 400 otherwise).',
  },
  'list-api-keys': {
    query: listApiKeysQuerySchema,
    ok: {
      status: 200,
      description: 'A page of keys (never their tokens).',
      schema: listOf(apiKeySchema),
      example: page([
        {
          object: 'api_key',
          id: KEY_ID,
          name: 'Production sending',
          permission: 'sending_access',
          domain_id: DOMAIN_ID,
          created_at: T0,
          last_used_at: T2,
        },
      ]),
    },
    description: LIST,
  },
  'update-api-key': {
    body: updateApiKeySchema,
    ok: {
      status: 200,
      description: 'Renamed.',
      schema: apiKeyReferenceSchema,
      example: ref('api_key', KEY_ID),
    },
    errors: [404],
    requestExample: { name: 'Billing emails' },
  },
  'delete-api-key': {
    ok: {
      status: 200,
      description: 'Revoked: its next request gets 401.',
      schema: deletion('api_key'),
      example: removed('api_key', KEY_ID),
    },
    errors: [404],
  },
  'add-suppression': {
    body: addSuppressionSchema,
    ok: {
      status: 201,
      alsoStatuses: [200],
      description: 'Added (201), or already listed (200, the entry it has).',
      schema: suppressionSchema,
      example: {
        object: 'suppression',
        id: SUPPRESSION_ID,
        email: 'someone@example.com',
        origin: 'manual',
        source_id: null,
        created_at: T0,
      },
    },
    requestExample: { email: 'someone@example.com' },
  },
  'list-suppressions': {
    query: listSuppressionsQuerySchema,
    ok: {
      status: 200,
      description: 'A page of suppressed addresses.',
      schema: listOf(suppressionListItemSchema),
      example: page([
        {
          id: SUPPRESSION_ID,
          email: 'gone@example.com',
          origin: 'bounce',
          source_id: EMAIL_ID,
          created_at: T1,
        },
      ]),
    },
    description: `${LIST} \`origin\` filters.`,
  },
  'get-suppression': {
    ok: {
      status: 200,
      description: 'The entry.',
      schema: suppressionSchema,
      example: {
        object: 'suppression',
        id: SUPPRESSION_ID,
        email: 'gone@example.com',
        origin: 'bounce',
        source_id: EMAIL_ID,
        created_at: T1,
      },
    },
    errors: [404],
    description: 'By id (`sup_…`) or by address.',
  },
  'delete-suppression': {
    ok: {
      status: 200,
      description: "Taken off the list (and off SES's account-level list): it is mailed again.",
      schema: suppressionRemovedSchema,
      example: { object: 'suppression', id: SUPPRESSION_ID, email: 'gone@example.com', deleted: true },
    },
    errors: [404],
    description:
      'By id (`sup_…`) or by address; 404 when it is not on the list. Ours beside Resend: `email`.',
  },
  'batch-add-suppressions': {
    body: batchAddSuppressionsSchema,
    ok: {
      status: 201,
      description:
        'One entry per address given, in order; `added: false` where it was listed already (it keeps its entry).',
      schema: suppressionsAddedSchema,
      example: {
        data: [
          {
            object: 'suppression',
            id: SUPPRESSION_ID,
            email: 'ana@example.com',
            origin: 'manual',
            added: true,
          },
          {
            object: 'suppression',
            id: 'sup_01m7yy8c0de1v5k3jq9w2t6mra',
            email: 'gone@example.com',
            origin: 'bounce',
            added: false,
          },
        ],
      },
    },
    requestExample: { emails: ['ana@example.com', 'gone@example.com'] },
    description: `1 to ${MAX_SUPPRESSION_BATCH} addresses. Ours beside Resend: \`email\`, \`origin\`, \`added\`.`,
  },
  'batch-remove-suppressions': {
    body: batchRemoveSuppressionsSchema,
    ok: {
      status: 200,
      description:
        'One entry per one given, in order; `deleted: false` (and a null id) where none was listed.',
      schema: suppressionsRemovedSchema,
      example: {
        data: [
          { object: 'suppression', id: SUPPRESSION_ID, email: 'ana@example.com', deleted: true },
          { object: 'suppression', id: null, email: 'never@example.com', deleted: false },
        ],
      },
    },
    requestExample: { emails: ['ana@example.com', 'never@example.com'] },
    description: `\`emails\` or \`ids\` (not both), 1 to ${MAX_SUPPRESSION_BATCH}. Ours beside Resend: \`email\` (null when given by an id that is not listed).`,
  },
  'create-webhook': {
    body: createWebhookSchema,
    ok: {
      status: 201,
      description: 'Added, with its signing secret.',
      schema: webhookSecretSchema,
      example: { object: 'webhook', id: WEBHOOK_ID, signing_secret: SECRET },
    },
    requestExample: {
      endpoint: 'https://hooks.acme.test/email',
      events: ['email.delivered', 'email.bounced'],
    },
    description: `The endpoint must be https and resolve to public addresses only; at most ${MAX_WEBHOOKS} endpoints. Every event type Resend takes may be subscribed to; those this service never raises are never sent.`,
  },
  'list-webhooks': {
    query: listWebhooksQuerySchema,
    ok: {
      status: 200,
      description: 'A page of endpoints (never their secrets).',
      schema: listOf(webhookListItemSchema),
      example: page([webhookListedExample]),
    },
    description: LIST,
  },
  'get-webhook': {
    ok: {
      status: 200,
      description: 'The endpoint, with its signing secret.',
      schema: webhookSchema,
      example: { object: 'webhook', ...webhookListedExample, signing_secret: SECRET, disabled_reason: null },
    },
    errors: [404],
  },
  'update-webhook': {
    body: updateWebhookSchema,
    ok: {
      status: 200,
      description: 'Changed.',
      schema: webhookReferenceSchema,
      example: ref('webhook', WEBHOOK_ID),
    },
    errors: [404],
    requestExample: { events: ['email.delivered', 'email.bounced', 'email.complained'], status: 'enabled' },
    description:
      'At least one of `endpoint`, `events`, `status`. Enabling an endpoint disabled after failing starts it afresh.',
  },
  'delete-webhook': {
    ok: {
      status: 200,
      description: 'Removed: its messages still queued are dropped.',
      schema: deletion('webhook'),
      example: removed('webhook', WEBHOOK_ID),
    },
    errors: [404],
  },
  'rotate-webhook-secret': {
    ok: {
      status: 200,
      description: 'The new secret; the old one keeps signing beside it for 24 hours.',
      schema: webhookSecretSchema,
      example: {
        object: 'webhook',
        id: WEBHOOK_ID,
        signing_secret: 'whsec_Jw0yC3d2m9vQ8rB1kT5nX7pL4sA6eH0uZiGoRfMcVbY=',
      },
    },
    errors: [404],
    description: 'Ours: Resend has no such route.',
  },
  'list-webhook-events': {
    query: listMessagesQuerySchema,
    ok: {
      status: 200,
      description: "A page of the endpoint's messages, each with its status.",
      schema: listOf(webhookMessageListItemSchema),
      example: page([messageListedExample]),
    },
    errors: [404],
    description: `${LIST} Ours: Resend has no such route.`,
  },
  'get-webhook-event': {
    ok: {
      status: 200,
      description: 'The message, with its payload as sent.',
      schema: webhookMessageSchema,
      example: {
        object: 'webhook_event',
        ...messageListedExample,
        payload: {
          type: 'email.delivered',
          created_at: T1,
          data: {
            email_id: EMAIL_ID,
            created_at: T0,
            from: 'Acme <hello@acme.test>',
            to: ['someone@example.com'],
            subject: 'Your receipt',
          },
        },
      },
    },
    errors: [404],
    description: 'Ours: Resend has no such route.',
  },
  'list-webhook-attempts': {
    query: listAttemptsQuerySchema,
    ok: {
      status: 200,
      description: "A page of the message's attempts, newest first.",
      schema: listOf(webhookAttemptSchema),
      example: page([
        {
          id: 'atmpt_01m80mv9xk2q5b7d0wf3s8n4ja',
          http_status_code: 200,
          response: '{"ok":true}',
          sent_at: '2026-11-22T03:29:58.120Z',
          duration_ms: 184,
        },
      ]),
    },
    errors: [404],
    description: `${LIST} Ours: Resend has no such route.`,
  },
  'replay-webhook-event': {
    ok: {
      status: 200,
      description: 'Queued: one more attempt, with the same message id (receivers deduplicate by it).',
      schema: webhookEventReferenceSchema,
      example: ref('webhook_event', MESSAGE_ID),
    },
    errors: [404],
    description: 'One attempt, no retries. Ours: Resend has no such route.',
  },
  'list-logs': {
    query: listLogsQuerySchema,
    ok: {
      status: 200,
      description: 'A page of request logs, newest first (without their bodies).',
      schema: logListResponseSchema,
      example: {
        object: 'list',
        has_more: false,
        data: [
          {
            id: '019ab9a2-4c3e-7d10-8f2a-3b4c5d6e7f80',
            created_at: '2026-11-22T03:29:55.214Z',
            endpoint: '/v1/emails',
            method: 'POST',
            response_status: 200,
            user_agent: 'resend-node:6.38.0',
            api_key_id: 'key_01m80p3k8xe4vbr9n6tq2j7c5d',
            duration_ms: 41.27,
          },
        ],
      },
    },
    description:
      'Every API request a handler answered (not these reads themselves), kept `logRetentionDays` (30 by default). Cursor pages (`after`, `before`: a log id); `status` filters by class (`2xx`, `3xx`, `4xx`, `5xx`). A deployment with request logs turned off (`requestLogs=false`) answers 404 saying so. See docs/logs.md.',
    errors: [404],
  },
  'get-log': {
    ok: {
      status: 200,
      description:
        'One request, with its request and response bodies, redacted (no token, signing secret, attachment content or download link) and capped at 8 KB each.',
      schema: logResponseSchema,
      example: {
        object: 'log',
        id: '019ab9a2-4c3e-7d10-8f2a-3b4c5d6e7f80',
        created_at: '2026-11-22T03:29:55.214Z',
        endpoint: '/v1/api-keys',
        method: 'POST',
        response_status: 201,
        user_agent: 'curl/8.5.0',
        api_key_id: 'key_01m80p3k8xe4vbr9n6tq2j7c5d',
        duration_ms: 12.5,
        request_body: { name: 'production' },
        response_body: { object: 'api_key', id: 'key_01m80q0c4ab2m8s7z1r3d5e6fg', token: '[redacted]' },
      },
    },
    errors: [404],
  },
};

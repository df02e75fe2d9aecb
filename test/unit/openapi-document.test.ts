import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { toApiKeyBody } from '../../functions/api-keys/model.js';
import { COMMON_ERRORS } from '../../functions/api-reference/document.js';
import { type Domain, toDomainBody, trackingRecords } from '../../functions/domains/model.js';
import { receivingRecord } from '../../functions/domains/receiving.js';
import { toAttachmentBody } from '../../functions/emails/attachments.js';
import { toEmailBody } from '../../functions/emails/email-body.js';
import { ROUTE_DOCS } from '../../functions/route-docs.js';
import { API_ROUTES, PUBLIC_ROUTES, ROUTES } from '../../functions/routes.js';
import type { RouteDeclaration } from '../../functions/shared/route.js';
import { toSuppressionBody } from '../../functions/suppressions/model.js';
import { type Template, toTemplateBody, toTemplateListItem } from '../../functions/templates/model.js';
import {
  messageBody,
  toAttemptBody,
  toMessageBody,
  toWebhookBody,
  toWebhookListed,
} from '../../functions/webhooks/model.js';
import { compileSchema, openApiDocument, operations, validateAnswer } from '../support/openapi.js';
import { resendAnswer } from '../support/resend-schema.js';

type Json = Record<string, unknown>;

/**
 * Where our answer differs from Resend's document on purpose, and why: each must still occur
 * (a difference that went away is taken off this list).
 */
const KNOWN_DIFFERENCES: Record<string, { error: RegExp; why: string }> = {
  // Resend's document says a webhook id is a UUID; ours are `wh_…` ids like every other.
  'get-webhook': { error: /^\/id format/, why: 'webhook ids are wh_…, not UUIDs' },
  'create-webhook': { error: /^\/id format/, why: 'webhook ids are wh_…, not UUIDs' },
  'update-webhook': { error: /^\/id format/, why: 'webhook ids are wh_…, not UUIDs' },
  'delete-webhook': { error: /^\/id format/, why: 'webhook ids are wh_…, not UUIDs' },
  'list-webhooks': { error: /^\/data\/0\/id format/, why: 'webhook ids are wh_…, not UUIDs' },
  // An address given that was not on the list has no entry, so no id: null (Resend's says string).
  'batch-remove-suppressions': { error: /^\/data\/1\/id type/, why: 'no id for an address not listed' },
};

describe('the OpenAPI document', () => {
  const doc = openApiDocument();

  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('lists exactly the routes of the route table, each with its permission', () => {
    const listed = operations()
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(listed).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(Object.keys(ROUTE_DOCS).sort()).toEqual(ROUTES.map((r) => r.handler).sort());
    for (const { path, method, operation } of operations()) {
      const route = ROUTES.find((r) => r.path === path && r.method === method.toUpperCase());
      expect(operation.operationId).toBe(route?.handler);
      expect(operation['x-permission'], `${method} ${path}`).toBe(route?.permission);
      if (route?.permission === 'public' || route?.permission === 'token')
        expect(operation.security).toEqual([]);
      else expect(operation.security).toBeUndefined();
    }
    expect(PUBLIC_ROUTES.length).toBeGreaterThan(0);
    expect(doc.security).toEqual([{ apiKey: [] }]);
  });

  it('gives every API route the common errors, and a 404 to every route of one resource', () => {
    for (const { path, operation } of operations()) {
      if (operation['x-permission'] === 'public' || operation['x-permission'] === 'token') continue;
      const statuses = Object.keys(operation.responses as Json).map(Number);
      for (const status of COMMON_ERRORS) expect(statuses, `${operation.operationId}`).toContain(status);
      if (path.includes('{')) expect(statuses, `${operation.operationId}`).toContain(404);
    }
  });

  it("has an example of every route's answer, and each fits its schema", () => {
    for (const route of API_ROUTES) {
      const docs = ROUTE_DOCS[route.handler as keyof typeof ROUTE_DOCS];
      expect(docs?.example, route.handler).toBeDefined();
      for (const status of route.ok ?? [200])
        expect(validateAnswer(route.handler, status, docs?.example)).toEqual([]);
    }
  });

  it('has an example of every request body, and each fits its schema', () => {
    for (const { operation } of operations()) {
      const body = (operation.requestBody as Json | undefined)?.content as
        | Record<string, { schema: unknown; example?: unknown }>
        | undefined;
      if (!body) continue;
      const json = body['application/json'];
      expect(json?.example, `${operation.operationId}`).toBeDefined();
      const validate = compileSchema(json?.schema, `request ${operation.operationId}`);
      expect(validate(json?.example) ? [] : validate.errors, `${operation.operationId}`).toEqual([]);
    }
  });

  it('describes a send by template and a batch from the send schema, and refuses what the handlers refuse', () => {
    const bodySchema = (path: string) => {
      const operation = (doc.paths as Record<string, Record<string, Json>>)[path]?.post as Json;
      const content = (operation.requestBody as Json).content as Record<string, { schema: unknown }>;
      return { schema: content['application/json']?.schema, parameters: operation.parameters as Json[] };
    };
    const sendSchema = bodySchema('/v1/emails').schema;
    const validate = compileSchema(sendSchema, 'send body');
    const from = 'Acme <hello@acme.test>';
    expect(validate({ from, to: 'a@example.com', subject: 'Hi', text: 'Hi' })).toBe(true);
    expect(validate({ to: ['a@example.com'], template: { id: 'welcome', variables: { NAME: 'A' } } })).toBe(
      true,
    );
    // No body, or a body beside a template, or an unknown field: refused.
    expect(validate({ from, to: 'a@example.com', subject: 'Hi' })).toBe(false);
    expect(validate({ to: 'a@example.com', template: { id: 'welcome' }, html: '<p>x</p>' })).toBe(false);
    expect(validate({ from, to: 'a@example.com', subject: 'Hi', text: 'Hi', bogus: 1 })).toBe(false);
    expect(validate({ from, to: Array(51).fill('a@example.com'), subject: 'Hi', text: 'Hi' })).toBe(false);

    const batch = bodySchema('/v1/emails/batch');
    const batchSchema = batch.schema;
    const validateBatch = compileSchema(batchSchema, 'batch body');
    const one = { from, to: 'a@example.com', subject: 'Hi', text: 'Hi' };
    expect(validateBatch([one])).toBe(true);
    expect(validateBatch([])).toBe(false);
    expect(validateBatch(Array(101).fill(one))).toBe(false);
    expect(validateBatch([{ ...one, attachments: [{ filename: 'a.txt', content: 'aGk=' }] }])).toBe(false);
    const names = batch.parameters.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['Idempotency-Key', 'x-batch-validation']));
  });

  it('accepts and refuses the same bodies as the schema each handler validates with', async () => {
    // The example, and bodies that differ from it in shape: none, not an object, an unknown field,
    // each field missing, each field of the wrong type, each list empty. For each, the document
    // and the handler's own schema must agree (what the document cannot say, a domain name's
    // syntax, is not among them).
    const disagreements: string[] = [];
    for (const { operation } of operations()) {
      const route: RouteDeclaration | undefined = ROUTES.find((r) => r.handler === operation.operationId);
      const spec = await route?.schemas?.();
      if (!spec?.body || spec.bodyJsonSchema) continue; // the send and the batch: the test above
      const content = (operation.requestBody as Json).content as Record<
        string,
        { schema: unknown; example?: unknown }
      >;
      const json = content['application/json'];
      const validate = compileSchema(json?.schema, `request ${operation.operationId}`);
      const example = json?.example as Json;
      const candidates: [string, unknown][] = [
        ['the example', example],
        ['{}', {}],
        ['null', null],
        ['[]', []],
        ['a string', 'x'],
        ['an unknown field', { ...example, unknown_field: 1 }],
      ];
      for (const key of Object.keys(example)) {
        const { [key]: _, ...without } = example;
        candidates.push([`without ${key}`, without]);
        candidates.push([`${key} a number`, { ...example, [key]: 12345 }]);
        if (Array.isArray(example[key])) candidates.push([`${key} empty`, { ...example, [key]: [] }]);
      }
      for (const [what, body] of candidates) {
        const documented = validate(body) === true;
        const accepted = spec.body.safeParse(body).success;
        if (documented !== accepted)
          disagreements.push(
            `${operation.operationId}, ${what}: the document ${documented ? 'accepts' : 'refuses'} it, the handler ${accepted ? 'accepts' : 'refuses'} it`,
          );
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('documents every error status the code can answer (the e2e answers are checked one by one; this covers the rest)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
      );
    const thrown = new Set<number>();
    for (const file of files('functions'))
      for (const m of readFileSync(file, 'utf8').matchAll(/new ApiError\(\s*(\d{3})/g))
        thrown.add(Number(m[1]));
    const documented = new Set<number>();
    for (const { operation } of operations())
      for (const status of Object.keys(operation.responses as Json)) documented.add(Number(status));
    // 405: the fallback's, for a method a path does not have (the document's description says so).
    documented.add(405);
    expect([...thrown].filter((s) => !documented.has(s)).sort()).toEqual([]);
    expect(String((doc.info as Json).description)).toMatch(/405/);
  });

  it('reads query integers as integers with their bounds', () => {
    const list = (doc.paths as Record<string, Record<string, Json>>)['/v1/emails']?.get as Json;
    const limit = (list.parameters as Json[]).find((p) => p.name === 'limit');
    expect(limit?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('documents every property of every request (no empty schema)', () => {
    const empty: string[] = [];
    const walk = (value: unknown, at: string) => {
      if (!value || typeof value !== 'object') return;
      if (Array.isArray(value)) {
        value.forEach((v, i) => {
          walk(v, `${at}/${i}`);
        });
        return;
      }
      const node = value as Json;
      for (const [name, property] of Object.entries((node.properties as Json | undefined) ?? {}))
        if (property && typeof property === 'object' && Object.keys(property).length === 0)
          empty.push(`${at}/properties/${name}`);
      if (node.items && typeof node.items === 'object' && Object.keys(node.items).length === 0)
        empty.push(`${at}/items`);
      for (const [key, child] of Object.entries(node)) walk(child, `${at}/${key}`);
    };
    for (const { operation } of operations()) {
      walk(operation.requestBody, `${operation.operationId}/requestBody`);
      walk(operation.parameters, `${operation.operationId}/parameters`);
    }
    walk((doc.components as Json).schemas, 'components');
    expect(empty).toEqual([]);
  });

  it("fits Resend's answer where Resend has the route", () => {
    const compared: string[] = [];
    const seenDifferences = new Set<string>();
    for (const route of API_ROUTES) {
      const resend = resendAnswer(route.method, route.path);
      if (!resend) continue;
      const docs = ROUTE_DOCS[route.handler as keyof typeof ROUTE_DOCS];
      compared.push(route.handler);
      expect(String(route.ok?.[0] ?? 200), `${route.handler}: Resend answers ${resend.status}`).toBe(
        resend.status,
      );
      const known = KNOWN_DIFFERENCES[route.handler];
      const errors = resend.validate(docs?.example).filter((e) => {
        if (known?.error.test(e)) {
          seenDifferences.add(route.handler);
          return false;
        }
        return true;
      });
      expect(errors, route.handler).toEqual([]);
    }
    expect(compared.length).toBeGreaterThan(30);
    expect([...seenDifferences].sort()).toEqual(Object.keys(KNOWN_DIFFERENCES).sort());
  });

  it('checks an answer against the document: undocumented fields and statuses fail, errors have the one shape', () => {
    const sent = ROUTE_DOCS['send-email'].example as Json;
    expect(validateAnswer('send-email', 200, sent)).toEqual([]);
    expect(validateAnswer('send-email', 200, { ...sent, extra: 1 })).not.toEqual([]);
    expect(validateAnswer('send-email', 418, sent)).toEqual(['send-email: status 418 is not documented']);
    const error = { statusCode: 404, name: 'not_found', message: 'Email "em_x" not found.' };
    expect(validateAnswer('get-email', 404, error)).toEqual([]);
    expect(validateAnswer('get-email', 404, { ...error, stack: 'x' })).not.toEqual([]);
    expect(validateAnswer('list-emails', 404, error)).not.toEqual([]);
  });

  it("takes what the core's answer builders make, in their sparse and full forms", () => {
    const at = '2026-11-22T03:29:55.214Z';
    const page = (data: unknown[]) => ({ object: 'list', has_more: false, data });
    const domain: Domain = {
      id: 'dom_01m7zq4c1pe8n0tr3ww5yq2kd6',
      domain: 'acme.test',
      created_at: at,
      checked_at: at,
      status: 'temporary_failure',
      sendable: false,
      open_tracking: true,
      click_tracking: true,
      tls: 'enforced',
      tracking_subdomain: 'links',
      receiving: false,
      records: trackingRecords({ domain: 'acme.test', tracking_subdomain: 'links' }, 'd1.cloudfront.net', {
        cname: 'verified',
        caa: 'temporary_failure',
      }),
    };
    expect(validateAnswer('get-domain', 200, toDomainBody(domain, 'eu-west-1'))).toEqual([]);
    // Receiving: its capability, its `Receiving` MX record and our receiving_problem.
    const receiving = toDomainBody(
      {
        ...domain,
        receiving: true,
        receiving_problem: 'the active rule set is another',
        records: [...domain.records, receivingRecord('acme.test', 'eu-west-1', 'failed')],
      },
      'eu-west-1',
    );
    expect(receiving.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(validateAnswer('get-domain', 200, receiving)).toEqual([]);
    expect(validateAnswer('get-domain', 200, { ...receiving, receiving_problem: 1 })).not.toEqual([]);
    expect(
      validateAnswer('get-domain', 200, {
        ...receiving,
        capabilities: { sending: 'enabled', receiving: 'on' },
      }),
    ).not.toEqual([]);
    const template: Template = {
      id: 'tpl_01m80hz2b7ed3s6h0c9yb1q4tm',
      name: 'Bare',
      reply_to: [],
      html: '<p>x</p>',
      variables: [],
      created_at: at,
      updated_at: at,
      current_version_id: 'tplv_01m80j0d4s8x2f7gkbq3n5w9re',
      status: 'draft',
      published_at: null,
      has_unpublished_versions: true,
    };
    expect(validateAnswer('get-template', 200, toTemplateBody(template))).toEqual([]);
    expect(validateAnswer('list-templates', 200, page([toTemplateListItem(template)]))).toEqual([]);
    const key = { id: 'key_1', name: 'k', permission: 'full_access' as const, hash: 'h', created_at: at };
    expect(validateAnswer('list-api-keys', 200, page([toApiKeyBody(key)]))).toEqual([]);
    const entry = {
      id: 'sup_1',
      email: 'a@example.com',
      origin: 'manual' as const,
      source_id: null,
      created_at: at,
    };
    expect(validateAnswer('get-suppression', 200, toSuppressionBody(entry))).toEqual([]);
    const webhook = {
      id: 'wh_1',
      endpoint: 'https://hooks.acme.test/',
      events: ['email.sent' as const, 'contact.created' as const],
      status: 'disabled' as const,
      created_at: at,
      signing_secret: 'whsec_x',
      disabled_reason: 'failing since 2026-11-19',
    };
    expect(validateAnswer('get-webhook', 200, toWebhookBody(webhook))).toEqual([]);
    expect(validateAnswer('list-webhooks', 200, page([toWebhookListed(webhook)]))).toEqual([]);
    const event = {
      type: 'domain.updated' as const,
      created_at: at,
      data: { id: 'dom_1', records: [] },
      key: 'k',
    };
    const message = {
      id: 'msg_1',
      webhook_id: 'wh_1',
      type: event.type,
      created_at: at,
      status: 'attempting' as const,
      next_attempt_at: at,
      attempts: 2,
      body: messageBody(event),
    };
    expect(validateAnswer('get-webhook-event', 200, toMessageBody(message))).toEqual([]);
    const attempt = {
      id: 'atmpt_1',
      message_id: 'msg_1',
      sent_at: at,
      http_status_code: 0,
      duration_ms: 15000,
      response: 'timeout',
    };
    expect(validateAnswer('list-webhook-attempts', 200, page([toAttemptBody(attempt)]))).toEqual([]);
    const byPath = {
      id: '6b0d7e71-3f4c-9a2e-8d15-0c2f4b7a9e33',
      filename: 'big.zip',
      content_type: 'application/zip',
      content_disposition: 'inline' as const,
      content_id: 'logo',
      size: null,
      path: 'https://files.acme.test/big.zip',
    };
    expect(validateAnswer('get-attachment', 200, toAttachmentBody(byPath, null))).toEqual([]);
    const email = {
      id: 'em_1',
      status: 'failed' as const,
      last_event: 'canceled' as const,
      message_id: null,
      created_at: at,
      scheduled_at: at,
      from: 'a@acme.test',
      to: ['b@example.com'],
      cc: [],
      bcc: ['c@example.com'],
      reply_to: [],
      subject: 's',
      html: null,
      text: 'x',
      tags: [],
      headers: { 'X-Entity': '1' },
      sent_at: null,
      failure_reason: 'canceled',
      template: { id: 'tpl_1', version_id: 'tplv_1' },
      recipients: [
        {
          email: 'b@example.com',
          kind: 'to' as const,
          status: 'suppressed' as const,
          last_event: 'suppressed' as const,
          at,
          detail: 'manual',
          suppressed: { reason: 'manual' as const },
        },
      ],
      events: [
        {
          type: 'opened',
          at,
          recipients: ['b@example.com'],
          user_agent: 'Mozilla/5.0',
          ip_address: '203.0.113.9',
          automated: 'privacy_proxy' as const,
        },
      ],
    };
    expect(validateAnswer('get-email', 200, toEmailBody(email))).toEqual([]);
    expect(validateAnswer('get-email', 200, { ...toEmailBody(email), bodies_expired: true })).toEqual([]);
  });
});

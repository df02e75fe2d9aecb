import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../functions/adapters/dynamodb/api-key-repository.js';
import { DynamoDomainRepository } from '../../functions/adapters/dynamodb/domain-repository.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoIdempotencyStore } from '../../functions/adapters/dynamodb/idempotency-store.js';
import { DynamoTemplateRepository } from '../../functions/adapters/dynamodb/template-repository.js';
import { type ApiKey, generateApiKey } from '../../functions/api-keys/model.js';
import { verifiedSenderDomains } from '../../functions/domains/domains.js';
import { type AcceptDeps, acceptMime } from '../../functions/emails/accept-send.js';
import { attachmentKey, mimeKey } from '../../functions/emails/attachments.js';
import type { SendJob } from '../../functions/emails/ports.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-email.js';
import { makeHandler as makeListAttachments } from '../../functions/handlers/list-attachments.js';
import { ApiError } from '../../functions/shared/errors.js';
import { systemClock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { MemoryContentStore, RecordingQueue, storeDomain } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * An SMTP message becomes an email (issue 42): acceptMime against DynamoDB (dynalite), with the
 * content store in memory; what the API then shows of it.
 */
let table: TestTable;
let emails: DynamoEmailRepository;
let apiKeys: DynamoApiKeyRepository;
let domains: DynamoDomainRepository;
let key: ApiKey;
let token: string;
let queue: RecordingQueue;
let content: MemoryContentStore;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  apiKeys = new DynamoApiKeyRepository(table.db, table.tableName);
  domains = new DynamoDomainRepository(table.db, table.tableName);
  ({ key, token } = generateApiKey('smtp', 'full_access', new Date()));
  await apiKeys.put(key);
  await storeDomain(domains, 'acme.test', 'verified');
  await storeDomain(domains, 'other.test', 'verified');
  await storeDomain(domains, 'pending.test', 'pending');
});
afterAll(() => table.stop());
beforeEach(() => {
  queue = new RecordingQueue();
  content = new MemoryContentStore();
});

const deps = (over: Partial<AcceptDeps> = {}): AcceptDeps => ({
  emails,
  queue,
  clock: systemClock,
  assertSenderDomain: verifiedSenderDomains(domains, systemClock),
  idempotency: new DynamoIdempotencyStore(table.db, table.tableName),
  templates: new DynamoTemplateRepository(table.db, table.tableName),
  content,
  log,
  ...over,
});

type Mail = ConstructorParameters<typeof MailComposer>[0];
/** A message as nodemailer composes it (a new Date and new MIME boundaries each time). */
const compose = async (mail: Mail) => new Uint8Array(await new MailComposer(mail).compile().build());
const rich: Mail = {
  from: 'Acme <hello@acme.test>',
  to: ['Ann <ann@example.test>', 'not-in-envelope@example.test'],
  cc: 'carl@example.test',
  bcc: 'hidden@example.test',
  subject: 'Your receipt',
  text: 'Thanks',
  html: '<p>Thanks</p>',
  attachments: [
    { filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4 receipt'), contentType: 'application/pdf' },
  ],
  headers: { 'X-SES-MESSAGE-TAGS': 'campaign=spring, kind=receipt' },
};
const envelope = {
  mailFrom: 'bounces@acme.test',
  recipients: ['ann@example.test', 'carl@example.test', 'hidden@example.test'],
};
const accept = (raw: Uint8Array, over: Partial<Parameters<typeof acceptMime>[1]> = {}, d = deps()) =>
  acceptMime(d, { raw, envelope, apiKey: key, ...over });

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('accepted');
    },
    (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      return {
        status: error.statusCode,
        name: error.errorName,
        fields: error.fieldErrors?.map((f) => f.field),
      };
    },
  );

describe('acceptMime', () => {
  it('stores the message as MIME and its parts: the envelope’s recipients, To and Cc as the header names them, the rest Bcc', async () => {
    const raw = await compose(rich);
    const sent = await accept(raw);
    expect(sent).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'queued' });
    const stored = await emails.getContent(sent.id);
    expect(stored).toMatchObject({
      from: 'Acme <hello@acme.test>',
      // A header address the envelope does not name is no recipient; a Bcc is one.
      to: ['Ann <ann@example.test>'],
      cc: ['carl@example.test'],
      bcc: ['hidden@example.test'],
      subject: 'Your receipt',
      text: expect.stringMatching(/^Thanks\s*$/),
      tags: [
        { name: 'campaign', value: 'spring' },
        { name: 'kind', value: 'receipt' },
      ],
      mime: { key: mimeKey(sent.id), size: raw.length, message_id: expect.stringContaining('@acme.test') },
    });
    expect(stored?.html).toContain('<p>Thanks</p>');
    expect(Buffer.from(content.objects.get(mimeKey(sent.id))?.bytes ?? []).equals(Buffer.from(raw))).toBe(
      true,
    );
    const [file] = stored?.attachments ?? [];
    expect(file).toMatchObject({ filename: 'receipt.pdf', content_type: 'application/pdf', size: 16 });
    expect(
      Buffer.from(content.objects.get(attachmentKey(sent.id, file?.id ?? ''))?.bytes ?? []).toString(),
    ).toBe('%PDF-1.4 receipt');
    expect((queue.jobs as SendJob[]).map((job) => job.id)).toEqual([sent.id]);

    // The API shows it as any email: its parts, its files; nothing of where its MIME is kept.
    const got = parseBody(
      (await makeGet({ apiKeys, emails, content, log })(
        httpEvent({ method: 'GET', path: `/v1/emails/${sent.id}`, token, pathParameters: { id: sent.id } }),
        context(),
      )) as APIGatewayProxyStructuredResultV2,
    );
    expect(got).toMatchObject({
      id: sent.id,
      text: expect.stringMatching(/^Thanks\s*$/),
      bcc: ['hidden@example.test'],
    });
    expect(got.html).toContain('<p>Thanks</p>');
    expect(got).not.toHaveProperty('mime');
    const files = parseBody(
      (await makeListAttachments({ apiKeys, emails, content, clock: systemClock, log })(
        httpEvent({
          method: 'GET',
          path: `/v1/emails/${sent.id}/attachments`,
          routeKey: 'GET /v1/emails/{id}/attachments',
          token,
          pathParameters: { id: sent.id },
        }),
        context(),
      )) as APIGatewayProxyStructuredResultV2,
    );
    expect(files.data).toEqual([expect.objectContaining({ filename: 'receipt.pdf', size: 16 })]);
  });

  it('refuses what a send refuses, storing nothing: 51 recipients, a bad tag, another domain than the key’s, an unverified domain', async () => {
    const raw = await compose(rich);
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.test`);
    expect(await refusal(accept(raw, { envelope: { mailFrom: '', recipients: many } }))).toMatchObject({
      status: 400,
      name: 'validation_error',
      fields: ['to'],
    });
    const badTag = await compose({ ...rich, headers: { 'X-SES-MESSAGE-TAGS': 'email_id=mine' } });
    expect(await refusal(accept(badTag))).toMatchObject({ status: 400, fields: ['tags.0.name'] });
    const { key: restricted } = generateApiKey('only other', 'sending_access', new Date(), {
      id: 'dom_other',
      domain: 'other.test',
    });
    expect(await refusal(accept(raw, { apiKey: restricted }))).toMatchObject({
      status: 403,
      name: 'restricted_api_key',
    });
    // The envelope sender counts too: a key of acme.test may not send with another domain's MAIL FROM.
    const acmeOnly = generateApiKey('only acme', 'sending_access', new Date(), {
      id: 'dom_a',
      domain: 'acme.test',
    });
    expect(
      await refusal(
        accept(raw, { apiKey: acmeOnly.key, envelope: { ...envelope, mailFrom: 'x@other.test' } }),
      ),
    ).toMatchObject({ status: 403 });
    const unverified = await compose({ ...rich, from: 'hello@pending.test' });
    expect(await refusal(accept(unverified))).toMatchObject({ status: 400, fields: ['from'] });
    expect(
      await refusal(accept(raw, { envelope: { ...envelope, mailFrom: 'bounces@pending.test' } })),
    ).toMatchObject({ status: 400, fields: ['from'] });
    expect(
      await refusal(accept(await compose({ ...rich, attachments: [{ filename: 'run.exe', content: 'x' }] }))),
    ).toMatchObject({ fields: ['attachments.0.filename'] });
    expect(content.objects.size).toBe(0);
    expect(queue.jobs).toEqual([]);
  });

  it('Resend-Idempotency-Key: the same message again (a new Date, new boundaries) is the first email; another message under it is 409', async () => {
    const idempotencyKey = `smtp-${Date.now()}`;
    const headers = { 'Resend-Idempotency-Key': idempotencyKey };
    const first = await accept(await compose({ ...rich, headers }));
    const again = await accept(await compose({ ...rich, headers, date: new Date(Date.now() + 5000) }));
    expect(again.id).toBe(first.id);
    expect(queue.jobs).toHaveLength(1);
    expect(await refusal(accept(await compose({ ...rich, headers, subject: 'Another' })))).toMatchObject({
      status: 409,
      name: 'invalid_idempotent_request',
    });
  });

  it('without it, the Message-ID is the key for 24 hours: any repeat is a replay; without a Message-ID, each message is an email', async () => {
    const messageId = `<retry-${Date.now()}@acme.test>`;
    const first = await accept(await compose({ ...rich, messageId }));
    const retried = await accept(await compose({ ...rich, messageId, subject: 'Changed on the retry' }));
    expect(retried.id).toBe(first.id);
    // Scoped to the key: another key's message with the same id is its own email.
    const other = generateApiKey('other', 'full_access', new Date()).key;
    expect((await accept(await compose({ ...rich, messageId }), { apiKey: other })).id).not.toBe(first.id);
    // The same message to another envelope (the rest of a list after 452 at the 51st RCPT, or a
    // relay splitting a long list) is another email: the envelope is part of the implicit key.
    const rest = await accept(await compose({ ...rich, messageId }), {
      envelope: { mailFrom: envelope.mailFrom, recipients: ['dora@example.test'] },
    });
    expect(rest.id).not.toBe(first.id);
    // The same envelope in another order and case is the same envelope: a replay.
    const reordered = await accept(await compose({ ...rich, messageId }), {
      envelope: {
        mailFrom: envelope.mailFrom,
        recipients: [...envelope.recipients].reverse().map((r) => r.toUpperCase()),
      },
    });
    expect(reordered.id).toBe(first.id);
    const bare = new Uint8Array(
      Buffer.from('From: hello@acme.test\r\nTo: ann@example.test\r\nSubject: No id\r\n\r\nHi\r\n'),
    );
    const one = await accept(bare, { envelope: { mailFrom: '', recipients: ['ann@example.test'] } });
    const two = await accept(bare, { envelope: { mailFrom: '', recipients: ['ann@example.test'] } });
    expect(one.id).not.toBe(two.id);
  });

  it('puts the MIME in the content store before the email’s items; a failure after it leaves no email', async () => {
    const order: string[] = [];
    const watched = new Proxy(emails, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name !== 'create') return typeof value === 'function' ? value.bind(target) : value;
        return async (email: Parameters<DynamoEmailRepository['create']>[0]) => {
          order.push(content.objects.has(mimeKey(email.id)) ? 'create after MIME' : 'create before MIME');
          throw new Error('the function died');
        };
      },
    });
    await expect(accept(await compose(rich), {}, deps({ emails: watched }))).rejects.toThrow(
      'the function died',
    );
    expect(order).toEqual(['create after MIME']);
    const [stored] = [...content.objects.keys()].filter((k) => k.endsWith('.eml'));
    const id = stored?.slice('bodies/'.length, -'.eml'.length) ?? '';
    expect(await emails.getState(id)).toBeNull();
    expect(queue.jobs).toEqual([]);
  });
});

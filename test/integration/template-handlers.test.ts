/**
 * Templates (issue 25): Resend's templates resource and sending by template, through the handlers
 * invoked with API Gateway v2 events, the table on dynalite. Answers are checked against Resend's
 * document (test/fixtures/resend-openapi.json).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoTemplateRepository } from '../../functions/adapters/dynamodb/template-repository.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { verifiedSenderDomains } from '../../functions/domains/domains.js';
import { makeHandler as makeCreate } from '../../functions/handlers/create-template.js';
import { makeHandler as makeDelete } from '../../functions/handlers/delete-template.js';
import { makeHandler as makeDuplicate } from '../../functions/handlers/duplicate-template.js';
import { makeHandler as makeGetEmail } from '../../functions/handlers/get-email.js';
import { makeHandler as makeGet } from '../../functions/handlers/get-template.js';
import { makeHandler as makeList } from '../../functions/handlers/list-templates.js';
import { makeHandler as makePublish } from '../../functions/handlers/publish-template.js';
import { makeHandler as makeBatch } from '../../functions/handlers/send-batch.js';
import { makeHandler as makeSend } from '../../functions/handlers/send-email.js';
import { makeHandler as makeUpdate } from '../../functions/handlers/update-template.js';
import { systemClock } from '../../functions/shared/ports.js';
import { cachedForSends } from '../../functions/templates/cache.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey, MemoryContentStore, RecordingQueue, storeDomain } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let templates: DynamoTemplateRepository;
let token: string;
let queue: RecordingQueue;
let content: MemoryContentStore;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  templates = new DynamoTemplateRepository(table.db, table.tableName);
  token = await fullAccessKey(repos.apiKeys);
  await storeDomain(repos.domains, 'acme.com', 'verified');
});
afterAll(() => table.stop());
beforeEach(() => {
  queue = new RecordingQueue();
  content = new MemoryContentStore();
});

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
type Answer = { status: number | undefined; body: any };
type Event = ReturnType<typeof httpEvent>;
type Invoke = (event: Event, ctx: ReturnType<typeof context>) => Promise<unknown>;

type Options = {
  id?: string;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** Another key's token (default: a full-access key). */
  token?: string;
};

/** One request to a route; `{id}` routes get the path parameter as API Gateway gives it. */
async function request(
  handler: Invoke,
  method: string,
  route: string,
  options: Options = {},
): Promise<Answer> {
  const { id, ...rest } = options;
  const event = httpEvent({
    method,
    path: id === undefined ? route : route.replace('{id}', encodeURIComponent(id)),
    routeKey: `${method} ${route}`,
    token,
    ...rest,
    ...(id === undefined ? {} : { pathParameters: { id } }),
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}

const templateDeps = () => ({ apiKeys: repos.apiKeys, templates, clock: systemClock, log });
const sendDeps = () => ({
  ...repos,
  templates,
  queue,
  content,
  clock: systemClock,
  assertSenderDomain: verifiedSenderDomains(repos.domains, systemClock),
  log,
});

const emailDeps = () => ({ apiKeys: repos.apiKeys, emails: repos.emails, content, log });

const api = {
  create: (body: unknown) => request(makeCreate(templateDeps()), 'POST', '/v1/templates', { body }),
  list: (query?: Record<string, string>) =>
    request(makeList(templateDeps()), 'GET', '/v1/templates', { query }),
  get: (id: string) => request(makeGet(templateDeps()), 'GET', '/v1/templates/{id}', { id }),
  update: (id: string, body: unknown) =>
    request(makeUpdate(templateDeps()), 'PATCH', '/v1/templates/{id}', { id, body }),
  remove: (id: string) => request(makeDelete(templateDeps()), 'DELETE', '/v1/templates/{id}', { id }),
  publish: (id: string) => request(makePublish(templateDeps()), 'POST', '/v1/templates/{id}/publish', { id }),
  duplicate: (id: string) =>
    request(makeDuplicate(templateDeps()), 'POST', '/v1/templates/{id}/duplicate', { id }),
  send: (body: unknown) => request(makeSend(sendDeps()), 'POST', '/v1/emails', { body }),
  batch: (body: unknown, headers: Record<string, string> = {}) =>
    request(makeBatch(sendDeps()), 'POST', '/v1/emails/batch', { body, headers }),
  email: (id: string) => request(makeGetEmail(emailDeps()), 'GET', '/v1/emails/{id}', { id }),
};

let unique = 0;
/** An alias no other test uses (the table is shared by the whole file). */
const alias = (base: string) => `${base}-${++unique}`;

const welcome = (over: Record<string, unknown> = {}) => ({
  name: 'Welcome',
  html: '<p>Hi {{{NAME}}}</p>',
  variables: [{ key: 'NAME', type: 'string' }],
  ...over,
});

async function create(body: Record<string, unknown> = welcome()): Promise<string> {
  const created = await api.create(body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}
async function createPublished(body: Record<string, unknown> = welcome()): Promise<string> {
  const id = await create(body);
  expect((await api.publish(id)).status).toBe(200);
  return id;
}

function expectValidationError(answer: Answer, field: string, message: RegExp = /./) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body).toMatchObject({ statusCode: 400, name: 'validation_error' });
  expect(answer.body.errors, JSON.stringify(answer.body)).toContainEqual({
    field,
    message: expect.stringMatching(message),
  });
}

/** Every email in the table (its status items). */
const countEmails = async () => {
  const { Count } = await table.db.send(
    new ScanCommand({
      TableName: table.tableName,
      FilterExpression: 'sk = :status',
      ExpressionAttributeValues: { ':status': 'STATUS' },
      Select: 'COUNT',
    }),
  );
  return Count ?? 0;
};

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const to = 'success@simulator.amazonses.com';
const from = 'Acme <hello@acme.com>';

describe('POST /v1/templates and GET /v1/templates/{id}', () => {
  it('201 {id, object}; GET shows a draft as Resend’s template object, without the fields not given', async () => {
    const created = await api.create(
      welcome({
        variables: [
          { key: 'NAME', type: 'string' },
          { key: 'COUNT', type: 'number', fallback_value: 3 },
        ],
      }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^tpl_[0-9a-z]{26}$/), object: 'template' });
    expectResendShape(created.body, 'CreateTemplateResponseSuccess');

    const got = await api.get(created.body.id);
    expect(got.status).toBe(200);
    expectResendShape(got.body, 'Template');
    const variable = { id: expect.stringMatching(/^tvar_/), created_at: expect.stringMatching(ISO) };
    expect(got.body).toEqual({
      object: 'template',
      id: created.body.id,
      current_version_id: expect.stringMatching(/^tplv_/),
      name: 'Welcome',
      reply_to: null,
      html: '<p>Hi {{{NAME}}}</p>',
      variables: [
        { ...variable, key: 'NAME', type: 'string', updated_at: expect.stringMatching(ISO) },
        {
          ...variable,
          key: 'COUNT',
          type: 'number',
          fallback_value: 3,
          updated_at: expect.stringMatching(ISO),
        },
      ],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      status: 'draft',
      published_at: null,
      has_unpublished_versions: true,
    });
    for (const key of ['alias', 'from', 'subject', 'text']) expect(got.body).not.toHaveProperty(key);
  });

  it('keeps alias, from, subject and text; reply_to as one address or a list', async () => {
    const name = alias('full');
    const id = await create(
      welcome({
        alias: name,
        from,
        subject: 'Hi {{{NAME}}}',
        text: 'Hi {{{NAME}}}',
        reply_to: 'help@acme.com',
      }),
    );
    const got = (await api.get(id)).body;
    expectResendShape(got, 'Template');
    expect(got).toMatchObject({
      alias: name,
      from,
      subject: 'Hi {{{NAME}}}',
      text: 'Hi {{{NAME}}}',
      reply_to: ['help@acme.com'],
    });
    const list = await create(welcome({ reply_to: ['a@acme.com', 'B <b@acme.com>'] }));
    expect((await api.get(list)).body.reply_to).toEqual(['a@acme.com', 'B <b@acme.com>']);
  });

  const base = { name: 'T', html: '<p>x</p>' };
  const variables = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `V${i}`, type: 'string' }));
  it.each([
    ['name missing', { html: '<p>x</p>' }, 'name'],
    ['html missing', { name: 'T' }, 'html'],
    ['an unknown field', { ...base, colour: 'red' }, 'colour'],
    ['an alias with a space', { ...base, alias: 'has space' }, 'alias'],
    ['an alias shaped like an id', { ...base, alias: 'tpl_x' }, 'alias'],
    ['a variable used in html, not declared', { ...base, html: '{{{NAME}}}' }, 'html'],
    ['a variable used in subject, not declared', { ...base, subject: 'Hi {{{NAME}}}' }, 'subject'],
    ['a variable used in text, not declared', { ...base, text: 'Hi {{{NAME}}}' }, 'text'],
    ['a reserved name', { ...base, variables: [{ key: 'EMAIL', type: 'string' }] }, 'variables.0.key'],
    ['a key declared twice', { ...base, variables: [...variables(1), ...variables(1)] }, 'variables.1.key'],
    [
      'a fallback of the wrong type',
      { ...base, variables: [{ key: 'N', type: 'number', fallback_value: '3' }] },
      'variables.0.fallback_value',
    ],
    ['51 variables', { ...base, variables: variables(51) }, 'variables'],
    ['a subject with a line break', { ...base, subject: 'Hi\r\nBcc: x@evil.com' }, 'subject'],
    ['a bad from address', { ...base, from: 'not an address' }, 'from'],
  ])('400 validation_error for %s, naming %s', async (_, body, field) => {
    expectValidationError(await api.create(body), field);
  });

  it('a refused template does not claim its alias', async () => {
    const name = alias('refused');
    expectValidationError(await api.create(welcome({ alias: name, html: '{{{OTHER}}}' })), 'html');
    expect((await api.create(welcome({ alias: name }))).status).toBe(201);
  });
});

describe('aliases', () => {
  it('are unique: a second template with one is 409 already_exists naming the holder', async () => {
    const name = alias('unique');
    const holder = await create(welcome({ alias: name }));
    const second = await api.create(welcome({ alias: name }));
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ name: 'already_exists', message: expect.stringContaining(holder) });
  });

  it('name the template for GET, PATCH, publish, duplicate and DELETE', async () => {
    const name = alias('by-alias');
    const id = await create(welcome({ alias: name }));
    expect((await api.get(name)).body).toMatchObject({ id, alias: name });

    const updated = await api.update(name, { name: 'Renamed' });
    expect(updated).toEqual({ status: 200, body: { id, object: 'template' } });
    expectResendShape(updated.body, 'UpdateTemplateResponseSuccess');
    expect((await api.get(id)).body.name).toBe('Renamed');

    expect(await api.publish(name)).toEqual({ status: 200, body: { id, object: 'template' } });
    expect((await api.get(id)).body.status).toBe('published');

    const copy = await api.duplicate(name);
    expect(copy.status).toBe(200);
    expect(copy.body.id).not.toBe(id);

    const removed = await api.remove(name);
    expect(removed).toEqual({ status: 200, body: { object: 'template', id, deleted: true } });
    expectResendShape(removed.body, 'RemoveTemplateResponseSuccess');
    expect((await api.get(name)).status).toBe(404);
    expect((await api.get(id)).status).toBe(404);
  });

  it('changing an alias frees the old one, a taken one is refused, and deleting frees it', async () => {
    const [x, y] = [alias('x'), alias('y')];
    const a = await create(welcome({ alias: x }));
    expect((await api.update(a, { alias: y })).status).toBe(200);
    expect((await api.get(x)).status).toBe(404);
    expect((await api.get(y)).body.id).toBe(a);

    const b = await create(welcome({ alias: x }));
    const taken = await api.update(b, { alias: y });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toContain(a);
    expect((await api.get(b)).body.alias).toBe(x);

    expect((await api.remove(a)).status).toBe(200);
    const c = await create(welcome({ alias: y }));
    expect((await api.get(y)).body.id).toBe(c);
  });
});

describe('versions', () => {
  it('publish: status published, published_at set, no unpublished versions', async () => {
    const id = await create();
    const published = await api.publish(id);
    expect(published).toEqual({ status: 200, body: { id, object: 'template' } });
    expectResendShape(published.body, 'PublishTemplateResponseSuccess');
    const got = (await api.get(id)).body;
    expectResendShape(got, 'Template');
    expect(got).toMatchObject({
      status: 'published',
      published_at: expect.stringMatching(ISO),
      has_unpublished_versions: false,
    });
  });

  it('an edit makes a new current version; sends render the published one until the next publish', async () => {
    const id = await createPublished(welcome({ from, subject: 'Hi', html: '<p>v1 {{{NAME}}}</p>' }));
    const first = (await api.get(id)).body;
    /** Sends with the template; the email shows this html, rendered from this version. */
    const sendsAs = async (html: string, version: string) => {
      const sent = await api.send({ to, template: { id, variables: { NAME: 'Ann' } } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect((await api.email(sent.body.id)).body).toMatchObject({ html, template_version_id: version });
    };
    await sendsAs('<p>v1 Ann</p>', first.current_version_id);

    expect((await api.update(id, { html: '<p>v2 {{{NAME}}}</p>' })).status).toBe(200);
    const edited = (await api.get(id)).body;
    expect(edited).toMatchObject({
      html: '<p>v2 {{{NAME}}}</p>',
      status: 'published',
      published_at: first.published_at,
      has_unpublished_versions: true,
    });
    expect(edited.current_version_id).not.toBe(first.current_version_id);
    await sendsAs('<p>v1 Ann</p>', first.current_version_id);

    await api.publish(id);
    expect((await api.get(id)).body.has_unpublished_versions).toBe(false);
    await sendsAs('<p>v2 Ann</p>', edited.current_version_id);
  });

  it('a PATCH of the name only makes no new version', async () => {
    const id = await createPublished();
    const before = (await api.get(id)).body;
    expect((await api.update(id, { name: 'Only the name' })).status).toBe(200);
    const after = (await api.get(id)).body;
    expect(after).toMatchObject({
      name: 'Only the name',
      current_version_id: before.current_version_id,
      has_unpublished_versions: false,
    });
  });
});

describe('GET /v1/templates', () => {
  it('lists newest first, in cursor pages of Resend’s list items', async () => {
    const name = alias('listed');
    const a = await create();
    const b = await create(welcome({ name: 'B' }));
    const c = await create(welcome({ alias: name }));

    const first = await api.list({ limit: '2' });
    expect(first.status).toBe(200);
    expectResendShape(first.body, 'ListTemplatesResponseSuccess');
    expect(first.body).toMatchObject({ object: 'list', has_more: true });
    expect(first.body.data.map((t: { id: string }) => t.id)).toEqual([c, b]);
    expect(first.body.data[0]).toEqual({
      id: c,
      name: 'Welcome',
      alias: name,
      status: 'draft',
      published_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(first.body.data[1]).not.toHaveProperty('alias');

    const older = await api.list({ limit: '2', after: b });
    expect(older.body.data[0].id).toBe(a);
    const newer = await api.list({ limit: '2', before: a });
    expect(newer.body).toMatchObject({ has_more: false, data: [{ id: c }, { id: b }] });
    expect((await api.list({ limit: '2', before: b })).body).toMatchObject({
      has_more: false,
      data: [{ id: c }],
    });
  });

  it('400 for a cursor that is not a template id', async () => {
    expectValidationError(await api.list({ after: 'em_01m80mv90eew9ryfvqd1ksnhes' }), 'after');
  });
});

describe('POST /v1/templates/{id}/duplicate', () => {
  it('a new draft named "<name> (copy)", no alias, the same content', async () => {
    const variables = [
      { key: 'NAME', type: 'string', fallback_value: 'there' },
      { key: 'ITEMS', type: 'list' },
    ];
    const source = await createPublished(
      welcome({
        alias: alias('dup'),
        from,
        subject: 'Hi {{{NAME}}}',
        html: '<p>{{{NAME}}} {{{ITEMS}}}</p>',
        variables,
      }),
    );
    const copy = await api.duplicate(source);
    expect(copy.status).toBe(200);
    expectResendShape(copy.body, 'DuplicateTemplateResponseSuccess');
    expect(copy.body).toEqual({ id: expect.stringMatching(/^tpl_/), object: 'template' });
    expect(copy.body.id).not.toBe(source);

    const [original, duplicate] = [(await api.get(source)).body, (await api.get(copy.body.id)).body];
    expectResendShape(duplicate, 'Template');
    expect(duplicate).not.toHaveProperty('alias');
    expect(duplicate).toMatchObject({
      name: 'Welcome (copy)',
      status: 'draft',
      published_at: null,
      has_unpublished_versions: true,
      from,
      subject: original.subject,
      html: original.html,
      variables: variables.map((v) => expect.objectContaining(v)),
    });
    expect(duplicate.current_version_id).not.toBe(original.current_version_id);
  });
});

describe('DELETE /v1/templates/{id}', () => {
  it('404 after; a send with it is a 400 naming template.id; emails sent with it keep their content', async () => {
    const id = await createPublished(welcome({ from, subject: 'Hi {{{NAME}}}' }));
    const sent = await api.send({ to, template: { id, variables: { NAME: 'Ann' } } });
    expect(sent.status).toBe(200);
    const before = await api.email(sent.body.id);
    expect(before.body).toMatchObject({ html: '<p>Hi Ann</p>', subject: 'Hi Ann', template_id: id });

    expect((await api.remove(id)).body).toEqual({ object: 'template', id, deleted: true });
    expect((await api.get(id)).body).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await api.remove(id)).status).toBe(404);
    expectValidationError(
      await api.send({ to, template: { id, variables: { NAME: 'Ann' } } }),
      'template.id',
      /does not exist/,
    );
    expect(await api.email(sent.body.id)).toEqual(before);
  });
});

describe('POST /v1/emails with a template', () => {
  const NASTY = '<b>"Ann" & co</b>';
  let full: string;
  let bare: string;
  let draft: string;
  let fullAlias: string;
  beforeAll(async () => {
    fullAlias = alias('send');
    full = await createPublished(
      welcome({
        alias: fullAlias,
        from,
        subject: 'Hi {{{NAME}}}',
        reply_to: 'help@acme.com',
        html: '<p title="{{{NAME}}}">{{{NAME}}} has {{{COUNT}}}</p>',
        text: 'Hi {{{NAME}}}, {{{COUNT}}}',
        variables: [
          { key: 'NAME', type: 'string' },
          { key: 'COUNT', type: 'number', fallback_value: 3 },
        ],
      }),
    );
    bare = await createPublished(welcome());
    draft = await create(welcome({ from, subject: 'Draft' }));
  });

  it('renders the published version: values escaped in html, as given in subject and text', async () => {
    const sent = await api.send({ to, template: { id: full, variables: { NAME: NASTY } } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const versionId = (await api.get(full)).body.current_version_id;
    const escaped = '&lt;b&gt;&quot;Ann&quot; &amp; co&lt;/b&gt;';
    expect(await repos.emails.get(sent.body.id)).toMatchObject({
      from,
      subject: `Hi ${NASTY}`,
      reply_to: ['help@acme.com'],
      html: `<p title="${escaped}">${escaped} has 3</p>`,
      text: `Hi ${NASTY}, 3`,
      template: { id: full, version_id: versionId },
    });

    const shown = await api.email(sent.body.id);
    expectResendShape(shown.body, 'Email');
    expect(shown.body).toMatchObject({ template_id: full, template_version_id: versionId });
    expect(shown.body).not.toHaveProperty('template');

    // What is queued carries the template it was rendered from.
    expect(queue.jobs).toEqual([
      {
        id: sent.body.id,
        content: expect.objectContaining({ template: { id: full, version_id: versionId } }),
      },
    ]);
  });

  it('the body’s own from, subject and reply_to win over the template’s; an alias names it', async () => {
    const sent = await api.send({
      from: 'News <news@acme.com>',
      subject: 'Own subject',
      reply_to: 'own@acme.com',
      to,
      template: { id: fullAlias, variables: { NAME: 'Bo', COUNT: 7 } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(await repos.emails.get(sent.body.id)).toMatchObject({
      from: 'News <news@acme.com>',
      subject: 'Own subject',
      reply_to: ['own@acme.com'],
      text: 'Hi Bo, 7',
      template: { id: full },
    });
  });

  const ref = (id: () => string, variables: Record<string, unknown> = { NAME: 'Ann' }) => ({
    to,
    template: { id: id(), variables },
  });
  it.each([
    ['html beside template', () => ({ ...ref(() => full), html: '<p>x</p>' }), 'html', /exclusive/],
    ['text beside template', () => ({ ...ref(() => full), text: 'x' }), 'text', /exclusive/],
    ['an unpublished template', () => ref(() => draft), 'template.id', /publish/],
    ['an unknown id', () => ref(() => 'tpl_01m80mv90eew9ryfvqd1ksnhes'), 'template.id', /does not exist/],
    ['an unknown alias', () => ref(() => 'no-such-alias'), 'template.id', /does not exist/],
    ['a required variable missing', () => ref(() => full, {}), 'template.variables.NAME', /no value/],
    [
      'a value of the wrong type',
      () => ref(() => full, { NAME: 'A', COUNT: '3' }),
      'template.variables.COUNT',
      /number/,
    ],
    [
      'an undeclared variable',
      () => ref(() => full, { NAME: 'A', EXTRA: 1 }),
      'template.variables.EXTRA',
      /declares no/,
    ],
    ['no from, in the body or the template', () => ({ ...ref(() => bare), subject: 'S' }), 'from', /./],
  ])('400 for %s, naming %s; nothing stored or queued', async (_, body, field, message) => {
    const before = await countEmails();
    expectValidationError(await api.send(body()), field, message);
    expect(queue.jobs).toEqual([]);
    expect(await countEmails()).toBe(before);
  });
});

describe('POST /v1/emails/batch with templates', () => {
  let id: string;
  let name: string;
  let draft: string;
  beforeAll(async () => {
    name = alias('batch');
    id = await createPublished(welcome({ alias: name, from, subject: 'Hi {{{NAME}}}' }));
    draft = await create(welcome());
  });
  const item = (variables: Record<string, unknown>, ref = id) => ({ to, template: { id: ref, variables } });

  it('renders each email with its own values, and queues what it used', async () => {
    const sent = await api.batch([item({ NAME: 'Ann' }), item({ NAME: '<i>Bo</i>' }, name)]);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [one, two] = sent.body.data.map((d: { id: string }) => d.id);
    const versionId = (await api.get(id)).body.current_version_id;
    expect(await repos.emails.get(one)).toMatchObject({ subject: 'Hi Ann', html: '<p>Hi Ann</p>' });
    expect(await repos.emails.get(two)).toMatchObject({
      subject: 'Hi <i>Bo</i>',
      html: '<p>Hi &lt;i&gt;Bo&lt;/i&gt;</p>',
      template: { id, version_id: versionId },
    });
    expect(queue.jobs.map((j) => ('content' in j ? j.content?.template : undefined))).toEqual([
      { id, version_id: versionId },
      { id, version_id: versionId },
    ]);
  });

  it.each([
    ['a required variable missing', () => item({}), '1.template.variables.NAME'],
    ['an unpublished template', () => item({ NAME: 'A' }, draft), '1.template.id'],
    ['html beside template', () => ({ ...item({ NAME: 'A' }), html: '<p>x</p>' }), '1.html'],
  ])('strict: %s refuses the whole batch, naming %s; nothing stored', async (_, bad, field) => {
    const before = await countEmails();
    expectValidationError(await api.batch([item({ NAME: 'Ann' }), bad()]), field);
    expect(queue.jobs).toEqual([]);
    expect(await countEmails()).toBe(before);
  });

  it('permissive: the good emails are sent, the others named by index', async () => {
    const sent = await api.batch(
      [
        item({ NAME: 'Ann' }),
        item({ NAME: 'A' }, draft),
        { from, to, subject: 'Plain', text: 'No template' },
        item({ NAME: 'A', EXTRA: 1 }),
      ],
      { 'x-batch-validation': 'permissive' },
    );
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data).toHaveLength(2);
    expect(sent.body.errors).toEqual([
      { index: 1, message: expect.stringContaining('1.template.id') },
      { index: 3, message: expect.stringContaining('3.template.variables.EXTRA') },
    ]);
    const [first, plain] = sent.body.data.map((d: { id: string }) => d.id);
    expect(queue.jobs.map((j) => j.id)).toEqual([first, plain]);
    expect(await repos.emails.get(first)).toMatchObject({ html: '<p>Hi Ann</p>', template: { id } });
    expect(await repos.emails.get(plain)).not.toHaveProperty('template');
  });
});

describe('races and limits', () => {
  it("changing only an alias's case keeps its reservation", async () => {
    const name = alias('Case');
    const id = await create(welcome({ alias: name }));
    expect((await api.update(id, { alias: name.toLowerCase() })).status).toBe(200);
    expect((await api.get(name.toLowerCase())).body.id).toBe(id);
    expect((await api.create(welcome({ alias: name.toLowerCase() }))).status).toBe(409);
  });

  it('an alias held for a template that was never stored is taken over, but not while a create may still be under way', async () => {
    const name = alias('dangling');
    const now = Date.now();
    // A create that claimed and died before storing its template, a minute ago.
    expect(await templates.claimAlias(name, 'tpl_01m80mv90eew9ryfvqd1ksnhes', now - 60_000)).toEqual({
      claimed: true,
    });
    expect((await api.create(welcome({ alias: name }))).status).toBe(201);
    // One claimed just now: its create may still store it.
    const fresh = alias('fresh');
    await templates.claimAlias(fresh, 'tpl_01m80mv90eew9ryfvqd1ksnhet', Date.now());
    expect((await api.create(welcome({ alias: fresh }))).status).toBe(409);
  });

  it('a publish racing a delete brings nothing back: the deleted template cannot send', async () => {
    const id = await create();
    const stale = await templates.get(id);
    expect((await api.remove(id)).status).toBe(200);
    // The publish read the template before the delete, and writes after it.
    let first = true;
    const racing = Object.assign(Object.create(templates), {
      get: async (id: string) => {
        if (!first) return templates.get(id);
        first = false;
        return stale;
      },
    });
    const answer = await request(
      makePublish({ ...templateDeps(), templates: racing }),
      'POST',
      '/v1/templates/{id}/publish',
      { id },
    );
    expect(answer.status).toBe(404);
    expect(await templates.published(id)).toBeNull();
    const send = await api.send({
      from: 'Acme <hello@acme.com>',
      to: 'a@example.com',
      subject: 'x',
      template: { id, variables: { NAME: 'x' } },
    });
    expectValidationError(send, 'template.id');
  });

  it('a rendered email may not outgrow what an email may be: a value used many times is refused, nothing stored', async () => {
    const id = await createPublished(
      welcome({ html: `<p>${'{{{NAME}}}'.repeat(3_000)}</p>`, subject: 'Big' }),
    );
    const answer = await api.send({
      from: 'Acme <hello@acme.com>',
      to: 'a@example.com',
      template: { id, variables: { NAME: 'x'.repeat(2_000) } },
    });
    expectValidationError(answer, 'template.variables', /larger than/);
    expect(queue.jobs).toHaveLength(0);
    // In a batch, against a batch email's own limit.
    const batch = await api.batch([
      {
        from: 'Acme <hello@acme.com>',
        to: 'a@example.com',
        template: { id, variables: { NAME: 'x'.repeat(100) } },
      },
    ]);
    expectValidationError(batch, '0.template.variables', /larger than/);
  });
});

describe('a scheduled send by template', () => {
  it('is rendered when accepted: a later publish or delete does not change it', async () => {
    const id = await createPublished();
    const sent = await api.send({
      from: 'Acme <hello@acme.com>',
      to: 'a@example.com',
      subject: 'Later',
      scheduled_at: 'in 1 hour',
      template: { id, variables: { NAME: 'Ann' } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.last_event).toBe('scheduled');
    expect((await api.update(id, { html: '<p>Bye {{{NAME}}}</p>' })).status).toBe(200);
    expect((await api.publish(id)).status).toBe(200);
    expect((await api.remove(id)).status).toBe(200);
    const email = await api.email(sent.body.id);
    expect(email.body).toMatchObject({ html: '<p>Hi Ann</p>', template_id: id });
  });
});

describe('after review', () => {
  const from = 'Acme <hello@acme.com>';

  it('an Idempotency-Key retry gets its first answer, whatever became of the template since (no template is read)', async () => {
    const id = await createPublished();
    const body = { from, to: 'a@example.com', subject: 'Once', template: { id, variables: { NAME: 'Ann' } } };
    const once = { 'idempotency-key': `tpl-once-${++unique}` };
    const first = await request(makeSend(sendDeps()), 'POST', '/v1/emails', { body, headers: once });
    expect(first.status).toBe(200);
    expect((await api.remove(id)).status).toBe(200);
    const again = await request(makeSend(sendDeps()), 'POST', '/v1/emails', { body, headers: once });
    expect(again).toEqual(first);
    const batchKey = { 'idempotency-key': `tpl-batch-${++unique}` };
    const second = await createPublished();
    const items = [
      { from, to: 'a@example.com', subject: 'B', template: { id: second, variables: { NAME: 'x' } } },
    ];
    const batch = await request(makeBatch(sendDeps()), 'POST', '/v1/emails/batch', {
      body: items,
      headers: batchKey,
    });
    expect(batch.status).toBe(200);
    expect((await api.remove(second)).status).toBe(200);
    expect(
      await request(makeBatch(sendDeps()), 'POST', '/v1/emails/batch', { body: items, headers: batchKey }),
    ).toEqual(batch);
  });

  it('a batch of more than 100 is refused before any template is read', async () => {
    let reads = 0;
    const counting = Object.assign(Object.create(templates), {
      idOfAlias: async () => {
        reads++;
        return null;
      },
      published: async () => {
        reads++;
        return null;
      },
    });
    const items = Array.from({ length: 101 }, (_, i) => ({
      from,
      to: 'a@example.com',
      template: { id: `a${i}` },
    }));
    const answer = await request(
      makeBatch({ ...sendDeps(), templates: counting }),
      'POST',
      '/v1/emails/batch',
      {
        body: items,
      },
    );
    expect(answer.status).toBe(400);
    expect(reads).toBe(0);
  });

  it('a template may hold 350 KB in all: a change that adds past it is refused', async () => {
    const id = await create(welcome({ html: `<p>{{{NAME}}}${'a'.repeat(200_000)}</p>` }));
    expectValidationError(await api.update(id, { text: 'b'.repeat(200_000) }), 'html', /350 KB/);
  });

  it('an alias item left behind names no template: read by it is 404, and it can be claimed again', async () => {
    const old = alias('left');
    const id = await create(welcome({ alias: old }));
    expect((await api.update(id, { alias: alias('moved') })).status).toBe(200);
    // The change died before freeing the old alias, a minute ago.
    await templates.claimAlias(old, id, Date.now() - 60_000);
    expect((await api.get(old)).status).toBe(404);
    expect((await api.create(welcome({ alias: old }))).status).toBe(201);
  });

  it("refuses __proto__ as a key; a user's tag may be named template_id (the service's own tag is esvc_template)", async () => {
    expect((await api.create(welcome({ variables: [{ key: '__proto__', type: 'string' }] }))).status).toBe(
      400,
    );
    const plain = { from, to: 'a@example.com', subject: 's', text: 't' };
    expect((await api.send({ ...plain, tags: [{ name: 'template_id', value: 'mine' }] })).status).toBe(200);
    expect((await api.send({ ...plain, tags: [{ name: 'esvc_template', value: 'x' }] })).status).toBe(400);
  });
});

describe("null, as Resend's SDK types allow it", () => {
  it('is "none" on create and "remove it" on a change, the alias freed', async () => {
    const name = alias('nulls');
    const id = await create(
      welcome({ alias: name, subject: 'Hi {{{NAME}}}', text: 'Hi', from: null, reply_to: null }),
    );
    expect((await api.get(id)).body).toMatchObject({ subject: 'Hi {{{NAME}}}', text: 'Hi', reply_to: null });
    expect((await api.update(id, { subject: null, text: null, alias: null })).status).toBe(200);
    const after = (await api.get(id)).body;
    expect(after).not.toHaveProperty('subject');
    expect(after).not.toHaveProperty('text');
    expect(after).not.toHaveProperty('alias');
    expect((await api.create(welcome({ alias: name }))).status).toBe(201);
  });
});

describe('the send functions keep a published template a second (cachedForSends)', () => {
  it('reads a template once a second per instance; one not published yet is read again at once; a publish reaches sends within the second', async () => {
    let now = 0;
    let reads = 0;
    const counting = Object.assign(Object.create(templates), {
      published: async (id: string) => {
        reads++;
        return templates.published(id);
      },
    });
    const cached = cachedForSends(counting, { now: () => new Date(now) }, 1_000);
    const id = await create();
    expect(await cached.published(id)).toBeNull();
    expect(await cached.published(id)).toBeNull();
    expect(reads).toBe(2); // nothing kept while there is nothing to keep
    expect((await api.publish(id)).status).toBe(200);
    const first = await cached.published(id);
    expect(first?.html).toBe('<p>Hi {{{NAME}}}</p>');
    expect((await api.update(id, { html: '<p>Bye {{{NAME}}}</p>' })).status).toBe(200);
    expect((await api.publish(id)).status).toBe(200);
    now += 999;
    expect((await cached.published(id))?.html).toBe('<p>Hi {{{NAME}}}</p>');
    expect(reads).toBe(3);
    now += 2;
    expect((await cached.published(id))?.html).toBe('<p>Bye {{{NAME}}}</p>');
  });
});

describe('who may send by template', () => {
  it("a sending_access key sends by template; one held to a domain only from the template's domain", async () => {
    const id = await createPublished(welcome({ from: 'Acme <hello@acme.com>', subject: 'Hi' }));
    const body = { to: 'a@example.com', template: { id, variables: { NAME: 'Ann' } } };
    const keyOf = async (domain?: { id: string; domain: string }) => {
      const { key, token: own } = generateApiKey('sender', 'sending_access', new Date(), domain);
      await repos.apiKeys.put(key);
      return own;
    };
    const send = async (token: string) =>
      request(makeSend(sendDeps()), 'POST', '/v1/emails', { body, token });
    expect((await send(await keyOf())).status).toBe(200);
    expect(
      (await send(await keyOf({ id: 'dom_01m80mv90eew9ryfvqd1ksnhes', domain: 'acme.com' }))).status,
    ).toBe(200);
    const elsewhere = await send(await keyOf({ id: 'dom_01m80mv90eew9ryfvqd1ksnhet', domain: 'other.com' }));
    expect(elsewhere.status).toBe(403);
    // Managing templates needs full access.
    const reader = await request(makeGet(templateDeps()), 'GET', '/v1/templates/{id}', {
      id,
      token: await keyOf(),
    });
    expect(reader.status).toBe(403);
  });
});

/**
 * One-click unsubscribe and the preference page (issue 40, item 7): the token routes through their
 * handlers with API Gateway v2 events, the table on dynalite, the signing keys read through the
 * local twin of the secrets extension (as on AWS, through its HTTP endpoint with the session token).
 */
import { randomBytes } from 'node:crypto';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  choiceItem,
  contactIdItem,
  contactItem,
  topicItem,
} from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoIdempotencyStore } from '../../functions/adapters/dynamodb/idempotency-store.js';
import { DynamoMetricsStore } from '../../functions/adapters/dynamodb/metrics-store.js';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoTemplateRepository } from '../../functions/adapters/dynamodb/template-repository.js';
import { DynamoUnsubscribeStore } from '../../functions/adapters/dynamodb/unsubscribe-store.js';
import { extensionSecret } from '../../functions/adapters/secrets-manager/extension.js';
import type { Contact, Topic } from '../../functions/contacts/contact.js';
import { verifiedSenderDomains } from '../../functions/domains/domains.js';
import { sendEmailSchema, toContent } from '../../functions/emails/email.js';
import { makeHandler as makeSend } from '../../functions/handlers/send-email.js';
import { makeHandler as makeUnsubscribe } from '../../functions/handlers/unsubscribe.js';
import { makeHandler as makePage } from '../../functions/handlers/unsubscribe-page.js';
import { parseInput } from '../../functions/http/middleware.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import type { Clock } from '../../functions/shared/ports.js';
import { KEY_SIGNS_AFTER_MS, KeyRing, parseKeySet, rotateKeySet } from '../../functions/unsubscribe/keys.js';
import { SignedUnsubscribeLinks } from '../../functions/unsubscribe/links.js';
import { UNSUBSCRIBE_PAGE_CSP } from '../../functions/unsubscribe/page.js';
import type { UnsubscribeDeps } from '../../functions/unsubscribe/preferences.js';
import type { WebhookEvent } from '../../functions/webhooks/model.js';
import { unsubscribeCounter } from '../../functions/wiring/unsubscribe.js';
import { type SecretsExtensionTwin, startSecretsExtension } from '../../local/secrets-extension.js';
import { context, httpEvent } from '../support/events.js';
import { fullAccessKey, MemoryContentStore, RecordingQueue, storeDomain } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:UnsubscribeKeys-AbCdEf';
const ORIGIN = 'https://mail.example.com';
const DAY = 86_400_000;

let table: TestTable;
let twin: SecretsExtensionTwin;
let repos: ReturnType<typeof createRepositories>;
let nowMs = Date.parse('2026-11-28T12:00:00Z');
const clock: Clock = { now: () => new Date(nowMs) };
const errors: unknown[] = [];
const log = {
  info: () => undefined,
  warn: () => undefined,
  error: (...args: unknown[]) => void errors.push(args),
};
const published: WebhookEvent[] = [];
const events = {
  subscriptions: async () => ({
    wants: () => true,
    publish: async (built: WebhookEvent[]) => void published.push(...built),
  }),
};

const at = () => new Date(nowMs).toISOString();
const topic = (name: string, over: Partial<Topic> = {}): Topic => ({
  id: newUuid(),
  name,
  description: `About ${name}`,
  default_subscription: 'opt_in',
  visibility: 'public',
  created_at: at(),
  updated_at: at(),
  ...over,
});
const news = topic('News');
const offers = topic('Offers', { default_subscription: 'opt_out' });
const secretTopic = topic('Beta programme', { visibility: 'private', default_subscription: 'opt_out' });
const hiddenTopic = topic('Staff only', { visibility: 'private', default_subscription: 'opt_out' });

const put = (Item: Record<string, unknown>) =>
  table.db.send(new PutCommand({ TableName: table.tableName, Item }));
async function addContact(email: string, over: Partial<Contact> = {}): Promise<Contact> {
  const contact: Contact = {
    id: newUuid(),
    email,
    first_name: null,
    last_name: null,
    unsubscribed: false,
    props: {},
    created_at: at(),
    updated_at: at(),
    ...over,
  };
  await put(contactItem(contact));
  await put(contactIdItem(contact));
  return contact;
}

const reads = () => new DynamoAudienceReads(table.db, table.tableName);
/** A ring reading the twin, as the wiring builds it (a fresh one: no copy kept between tests). */
const ring = () =>
  new KeyRing(
    extensionSecret({ secretId: SECRET_ARN, port: twin.port, sessionToken: twin.sessionToken }),
    () => nowMs,
  );
let keys: KeyRing;
const deps = (): UnsubscribeDeps & { log: typeof log } => ({
  keys,
  reads: reads(),
  store: new DynamoUnsubscribeStore(table.db, table.tableName),
  clock,
  events,
  log,
  counted: unsubscribeCounter(repos.emails, new DynamoMetricsStore(table.db, table.tableName, () => nowMs)),
});
const links = () =>
  new SignedUnsubscribeLinks({ origin: ORIGIN, keys: () => keys.keys(), now: () => new Date(nowMs) });
const tokenOf = (url: string) => url.slice(`${ORIGIN}/unsubscribe/`.length);

type Page = APIGatewayProxyStructuredResultV2 & { body: string; headers: Record<string, string> };
const pathOf = (token: string) => ({
  path: `/unsubscribe/${token}`,
  routeKey: undefined as unknown as string,
  token: null,
  pathParameters: { token },
});
async function open(token: string): Promise<Page> {
  const event = httpEvent({ method: 'GET', ...pathOf(token), routeKey: 'GET /unsubscribe/{token}' });
  return (await makePage(deps())(event, context())) as Page;
}
async function post(
  token: string,
  body?: string,
  contentType = 'application/x-www-form-urlencoded',
): Promise<Page> {
  const event = httpEvent({
    method: 'POST',
    ...pathOf(token),
    routeKey: 'POST /unsubscribe/{token}',
    ...(body === undefined ? {} : { body, headers: { 'content-type': contentType } }),
  });
  return (await makeUnsubscribe(deps())(event, context())) as Page;
}
const ONE_CLICK = 'List-Unsubscribe=One-Click';

async function scan() {
  const { Items = [] } = await table.db.send(
    new ScanCommand({ TableName: table.tableName, ConsistentRead: true }),
  );
  return Items.filter((item) => !String(item.pk).startsWith('METRIC')).sort((a, b) =>
    `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`),
  );
}
const contactOf = (address: string) => reads().contactByAddress(address, true);
const choicesOf = async (address: string) => {
  const contact = await contactOf(address);
  return contact
    ? Object.fromEntries((await reads().choicesOf(contact.id)).map((c) => [c.topic_id, c.subscription]))
    : {};
};

let emailId: string;
beforeAll(async () => {
  [table, twin] = await Promise.all([startTestTable(), startSecretsExtension()]);
  repos = createRepositories(table.tableName, table.db);
  // The first key, made a day ago (it signs).
  twin.put(SECRET_ARN, JSON.stringify(rotateKeySet(undefined, new Date(nowMs - DAY), randomBytes)));
  for (const t of [news, offers, secretTopic, hiddenTopic]) await put(topicItem(t));
  emailId = newEmailId();
  await repos.emails.create({
    id: emailId,
    created_at: at(),
    content: toContent(
      parseInput(sendEmailSchema, {
        from: 'Acme <news@acme.com>',
        to: ['a@example.com'],
        subject: 'Hi',
        text: 'Hello',
      }),
    ),
  });
});
afterAll(() => Promise.all([table.stop(), twin.stop()]));
beforeEach(() => {
  published.length = 0;
  keys = ring();
});

describe('the unsubscribe link', () => {
  it('is an https URL under PUBLIC_ORIGIN whose token names no key material and differs per recipient, topic and email', async () => {
    const one = await links().url({ address: 'Ann@Example.com', topicId: news.id, emailId });
    expect(one).toMatch(/^https:\/\/mail\.example\.com\/unsubscribe\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const others = await Promise.all([
      links().url({ address: 'bob@example.com', topicId: news.id, emailId }),
      links().url({ address: 'ann@example.com', topicId: offers.id, emailId }),
      links().url({ address: 'ann@example.com', topicId: news.id, emailId: newEmailId() }),
    ]);
    expect(new Set([one, ...others]).size).toBe(4);
    // The address is compared case-insensitively: the same link for any case.
    expect(await links().url({ address: 'ann@example.com', topicId: news.id, emailId })).toBe(one);
    // The keys were read through the extension's endpoint, with the session token.
    expect(twin.requests[0]).toBe(`/secretsmanager/get?secretId=${encodeURIComponent(SECRET_ARN)}`);
  });

  it('refuses a forged, altered or truncated token with the 404 page, reading and writing nothing of the contact', async () => {
    await addContact('forge@example.com');
    const good = tokenOf(await links().url({ address: 'forge@example.com', topicId: news.id, emailId }));
    const [payload, mac] = good.split('.') as [string, string];
    const other = Buffer.from(
      Buffer.from(payload, 'base64url').toString().replace('forge@example.com', 'victim@example.com'),
    ).toString('base64url');
    const forgedKey = tokenOf(
      await new SignedUnsubscribeLinks({
        origin: ORIGIN,
        keys: async () =>
          parseKeySet(JSON.stringify(rotateKeySet(undefined, new Date(nowMs - DAY), randomBytes))),
        now: () => new Date(nowMs),
      }).url({ address: 'forge@example.com', topicId: news.id, emailId }),
    );
    const flipped = `${payload}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const before = await scan();
    for (const bad of [
      `${other}.${mac}`,
      flipped,
      good.slice(0, -1),
      forgedKey,
      'not-a-token',
      `${payload}.`,
      '',
    ])
      for (const answer of [await open(bad), await post(bad, ONE_CLICK)]) {
        expect(answer.statusCode, bad).toBe(404);
        expect(answer.body).toContain('Link not found');
      }
    expect(await scan()).toEqual(before);
    expect(published).toEqual([]);
  });

  it('keeps working after a rotation (the previous key verifies), and stops once its key is retired', async () => {
    await addContact('rotate@example.com');
    const old = tokenOf(await links().url({ address: 'rotate@example.com', topicId: news.id, emailId }));
    const saved = twin.get(SECRET_ARN) as string;
    try {
      // A rotation: a new key; after an hour it signs, and the old one still verifies.
      twin.put(SECRET_ARN, JSON.stringify(rotateKeySet(parseKeySet(saved), new Date(nowMs), randomBytes)));
      nowMs += KEY_SIGNS_AFTER_MS;
      keys = ring();
      const fresh = tokenOf(await links().url({ address: 'rotate@example.com', topicId: news.id, emailId }));
      expect(fresh.split('.')[0]).not.toBe(old.split('.')[0]);
      expect((await open(old)).statusCode).toBe(200);
      expect((await open(fresh)).statusCode).toBe(200);
      // 60 days on, the old key is still listed; past 67 days after its successor, it is dropped.
      const later = rotateKeySet(
        parseKeySet(twin.get(SECRET_ARN) as string),
        new Date(nowMs + 60 * DAY),
        randomBytes,
      );
      expect(later.keys).toHaveLength(3);
      const retired = rotateKeySet(later, new Date(nowMs + 68 * DAY), randomBytes);
      expect(retired.keys.map((k) => k.id)).not.toContain(parseKeySet(saved).keys[0]?.id);
      twin.put(SECRET_ARN, JSON.stringify(retired));
      keys = ring();
      expect((await open(old)).statusCode).toBe(404);
      expect((await open(fresh)).statusCode).toBe(200);
    } finally {
      twin.put(SECRET_ARN, saved);
      nowMs = Date.parse('2026-11-28T12:00:00Z');
    }
  });
});

describe('the preference page (GET)', () => {
  it("lists the public topics, the private ones the contact is opted in to, and the link's, with its choices; it changes nothing", async () => {
    const contact = await addContact('page@example.com');
    await put(
      choiceItem({
        contact_id: contact.id,
        topic_id: secretTopic.id,
        subscription: 'opt_in',
        updated_at: at(),
      }),
    );
    await put(
      choiceItem({ contact_id: contact.id, topic_id: news.id, subscription: 'opt_out', updated_at: at() }),
    );
    const token = tokenOf(await links().url({ address: 'PAGE@example.com', topicId: offers.id, emailId }));
    const before = await scan();
    const page = await open(token);
    const again = await open(token);
    expect(await scan()).toEqual(before);
    expect(published).toEqual([]);
    expect(page.statusCode).toBe(200);
    expect(again.body).toBe(page.body);
    expect(page.headers['content-security-policy']).toBe(UNSUBSCRIBE_PAGE_CSP);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).not.toMatch(/<script/i);
    for (const shown of [news, offers, secretTopic]) expect(page.body).toContain(shown.name);
    expect(page.body).not.toContain(hiddenTopic.name);
    expect(page.body).toContain(`name="topic.${news.id}" value="opt_out" checked`);
    expect(page.body).toContain(`name="topic.${offers.id}" value="opt_out" checked`);
    expect(page.body).toContain(`name="topic.${secretTopic.id}" value="opt_in" checked`);
    expect(page.body).toMatch(/<form method="post">/);
  });
});

describe('one-click unsubscribe (POST)', () => {
  it("opts the contact out of the link's topic at once and answers 200, raising contact.topics.updated; a repeat changes nothing", async () => {
    await addContact('click@example.com');
    const token = tokenOf(await links().url({ address: 'click@example.com', topicId: news.id, emailId }));
    const answer = await post(token, ONE_CLICK);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('You are unsubscribed from News.');
    expect(await choicesOf('click@example.com')).toEqual({ [news.id]: 'opt_out' });
    expect((await contactOf('click@example.com'))?.unsubscribed).toBe(false);
    expect(published).toEqual([
      {
        type: 'contact.topics.updated',
        created_at: at(),
        key: expect.any(String),
        data: { email: 'click@example.com', topics: [{ id: news.id, subscription: 'opt_out' }] },
      },
    ]);
    const before = await scan();
    expect((await post(token, ONE_CLICK)).statusCode).toBe(200);
    expect(await scan()).toEqual(before);
    expect(published).toHaveLength(1);
  });

  it('takes the multipart body some providers send, and a POST with no body, as the one-click', async () => {
    await addContact('multi@example.com');
    await addContact('empty@example.com');
    const multi = tokenOf(await links().url({ address: 'multi@example.com', topicId: news.id, emailId }));
    const body =
      '--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n';
    expect((await post(multi, body, 'multipart/form-data; boundary=b')).statusCode).toBe(200);
    expect(await choicesOf('multi@example.com')).toEqual({ [news.id]: 'opt_out' });
    const empty = tokenOf(await links().url({ address: 'empty@example.com', topicId: news.id, emailId }));
    expect((await post(empty)).statusCode).toBe(200);
    expect(await choicesOf('empty@example.com')).toEqual({ [news.id]: 'opt_out' });
  });

  it('unsubscribes from every email through a link without a topic, raising contact.updated', async () => {
    const contact = await addContact('global@example.com');
    const token = tokenOf(await links().url({ address: 'global@example.com', topicId: null, emailId }));
    expect((await post(token, ONE_CLICK)).statusCode).toBe(200);
    expect((await contactOf('global@example.com'))?.unsubscribed).toBe(true);
    expect(published).toMatchObject([
      { type: 'contact.updated', data: { id: contact.id, email: 'global@example.com', unsubscribed: true } },
    ]);
  });

  it('creates the contact of an address that has none, opted out', async () => {
    const token = tokenOf(
      await links().url({ address: 'New.Person@Example.com', topicId: news.id, emailId }),
    );
    expect((await post(token, ONE_CLICK)).statusCode).toBe(200);
    const created = await contactOf('new.person@example.com');
    expect(created).toMatchObject({ email: 'new.person@example.com', unsubscribed: false });
    expect(await choicesOf('new.person@example.com')).toEqual({ [news.id]: 'opt_out' });
    expect(published.map((e) => e.type)).toEqual(['contact.created', 'contact.topics.updated']);
    // Found by id as well as by address (its id item).
    expect((await reads().contactById(created?.id ?? ''))?.email).toBe('new.person@example.com');
  });

  it('creates the contact of an address that has none, opted out, where the topic is opt_out by default too', async () => {
    const token = tokenOf(
      await links().url({ address: 'Quiet.Person@Example.com', topicId: offers.id, emailId }),
    );
    expect((await post(token, ONE_CLICK)).statusCode).toBe(200);
    expect(await contactOf('quiet.person@example.com')).toMatchObject({ unsubscribed: false });
    expect(await choicesOf('quiet.person@example.com')).toEqual({ [offers.id]: 'opt_out' });
    expect(published.map((e) => e.type)).toEqual(['contact.created', 'contact.topics.updated']);
    // A repeat finds the choice made: it writes and raises nothing more.
    published.length = 0;
    expect((await post(token, ONE_CLICK)).statusCode).toBe(200);
    expect(published).toEqual([]);
  });

  it('counts each opt-out once as unsubscribed in the email metrics, under the sending domain', async () => {
    await addContact('metric@example.com');
    const metrics = new DynamoMetricsStore(table.db, table.tableName, () => nowMs);
    const hour = Math.floor(nowMs / 3_600_000) * 3_600_000;
    const counted = async () =>
      (await metrics.hours(hour, hour))
        .filter((h) => h.domain === 'acme.com')
        .reduce((n, h) => n + (h.counts.unsubscribed ?? 0), 0);
    const before = await counted();
    const token = tokenOf(await links().url({ address: 'metric@example.com', topicId: offers.id, emailId }));
    // Offers is opt_out by default: the contact is out already, nothing to count.
    await post(token, ONE_CLICK);
    expect(await counted()).toBe(before);
    const newsToken = tokenOf(
      await links().url({ address: 'metric@example.com', topicId: news.id, emailId }),
    );
    await post(newsToken, ONE_CLICK);
    await post(newsToken, ONE_CLICK);
    expect(await counted()).toBe(before + 1);
  });
});

describe("the page's form (POST)", () => {
  it('sets the listed topics as chosen and the global unsubscribe; a private topic it does not list cannot be joined', async () => {
    await addContact('form@example.com');
    const token = tokenOf(await links().url({ address: 'form@example.com', topicId: news.id, emailId }));
    const form = new URLSearchParams({
      form: 'preferences',
      [`topic.${news.id}`]: 'opt_out',
      [`topic.${offers.id}`]: 'opt_in',
      [`topic.${hiddenTopic.id}`]: 'opt_in',
      unsubscribed: 'on',
    });
    const answer = await post(token, form.toString());
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('Your preferences are saved.');
    expect(await choicesOf('form@example.com')).toEqual({ [news.id]: 'opt_out', [offers.id]: 'opt_in' });
    expect((await contactOf('form@example.com'))?.unsubscribed).toBe(true);
    expect(published.map((e) => e.type).sort()).toEqual(['contact.topics.updated', 'contact.updated']);
    // Unticking the box subscribes again.
    const back = new URLSearchParams({ form: 'preferences', [`topic.${news.id}`]: 'opt_out' });
    await post(token, back.toString());
    expect((await contactOf('form@example.com'))?.unsubscribed).toBe(false);
  });
});

describe('a burst of one-click POSTs', () => {
  it("500 of them never make POST /v1/emails answer 429: token routes spend no key's rate limit", async () => {
    const apiKey = await fullAccessKey(repos.apiKeys);
    await storeDomain(repos.domains, 'acme.com', 'verified');
    const tokens: string[] = [];
    for (let i = 0; i < 50; i++) {
      await addContact(`burst${i}@example.com`);
      tokens.push(
        tokenOf(await links().url({ address: `burst${i}@example.com`, topicId: news.id, emailId })),
      );
    }
    const send = () =>
      makeSend({
        apiKeys: repos.apiKeys,
        templates: new DynamoTemplateRepository(table.db, table.tableName),
        emails: repos.emails,
        queue: new RecordingQueue(),
        clock: { now: () => new Date() },
        assertSenderDomain: verifiedSenderDomains(repos.domains, { now: () => new Date() }),
        idempotency: new DynamoIdempotencyStore(table.db, table.tableName),
        content: new MemoryContentStore(),
        log,
      })(
        httpEvent({
          method: 'POST',
          path: '/v1/emails',
          token: apiKey,
          body: { from: 'hello@acme.com', to: 'x@example.com', subject: 'Hi', text: 'Hello' },
        }),
        context(),
      ) as Promise<APIGatewayProxyStructuredResultV2>;
    // 500 clicks as fast as the in-process table takes them (20 at a time), the sends among them.
    const statuses: number[] = [];
    let next = 0;
    const clicker = async () => {
      while (next < 500) {
        const i = next++;
        statuses.push((await post(tokens[i % tokens.length] as string, ONE_CLICK)).statusCode ?? 0);
      }
    };
    const sending = (async () => {
      while (next < 100) await new Promise((resolve) => setImmediate(resolve));
      return Promise.all(Array.from({ length: 5 }, () => send()));
    })();
    await Promise.all(Array.from({ length: 20 }, clicker));
    const sent = await sending;
    expect(
      statuses.filter((status) => status !== 200),
      String((errors[0] as { error: Error }[] | undefined)?.[1]?.error?.stack),
    ).toEqual([]);
    expect(statuses).toHaveLength(500);
    expect(sent.map((a) => a.statusCode)).toEqual(Array(5).fill(200));
    for (let i = 0; i < tokens.length; i++)
      expect(await choicesOf(`burst${i}@example.com`)).toEqual({ [news.id]: 'opt_out' });
    // Each contact's choice raised one event, however many clicks.
    expect(published.filter((e) => e.type === 'contact.topics.updated')).toHaveLength(50);
  }, 120_000);
});

/**
 * The unsubscribe preference page (issue 40, item 7) in a real browser: headless Chromium opens an
 * unsubscribe link served by the page's and the POST's handlers (API Gateway v2 events built from
 * each request, the table on dynalite, the keys through the twin of the secrets extension). The
 * page works with script off, opening it changes nothing, and its form saves the choices.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactIdItem, contactItem, topicItem } from '../../functions/adapters/dynamodb/audience-items.js';
import { DynamoAudienceReads } from '../../functions/adapters/dynamodb/audience-reads.js';
import { DynamoUnsubscribeStore } from '../../functions/adapters/dynamodb/unsubscribe-store.js';
import { extensionSecret } from '../../functions/adapters/secrets-manager/extension.js';
import type { Contact, Topic } from '../../functions/contacts/contact.js';
import { makeHandler as makeUnsubscribe } from '../../functions/handlers/unsubscribe.js';
import { makeHandler as makePage } from '../../functions/handlers/unsubscribe-page.js';
import { newEmailId, newUuid } from '../../functions/shared/ids.js';
import { KeyRing, parseKeySet, rotateKeySet } from '../../functions/unsubscribe/keys.js';
import { signToken } from '../../functions/unsubscribe/token.js';
import { type SecretsExtensionTwin, startSecretsExtension } from '../../local/secrets-extension.js';
import { CHROMIUM } from '../support/browser.js';
import { context, httpEvent } from '../support/events.js';
import { startTestTable, type TestTable } from '../support/table.js';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:UnsubscribeKeys-AbCdEf';
const now = new Date();
const iso = now.toISOString();
const topic = (name: string, over: Partial<Topic> = {}): Topic => ({
  id: newUuid(),
  name,
  description: `About ${name}`,
  default_subscription: 'opt_in',
  visibility: 'public',
  created_at: iso,
  updated_at: iso,
  ...over,
});
const news = topic('Product news');
const offers = topic('Offers', { default_subscription: 'opt_out' });

let table: TestTable;
let twin: SecretsExtensionTwin;
let server: Server;
let browser: Browser;
let origin: string;
let token: string;
const contact: Contact = {
  id: newUuid(),
  email: 'reader@example.com',
  first_name: null,
  last_name: null,
  unsubscribed: false,
  props: {},
  created_at: iso,
  updated_at: iso,
};
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  [table, twin] = await Promise.all([startTestTable(), startSecretsExtension()]);
  const secret = JSON.stringify(rotateKeySet(undefined, new Date(now.getTime() - 86_400_000), randomBytes));
  twin.put(ARN, secret);
  for (const Item of [topicItem(news), topicItem(offers), contactItem(contact), contactIdItem(contact)])
    await table.db.send(new PutCommand({ TableName: table.tableName, Item }));
  token = signToken(
    parseKeySet(secret),
    { address: contact.email, topicId: news.id, emailId: newEmailId() },
    now,
  );
  const deps = {
    keys: new KeyRing(extensionSecret({ secretId: ARN, port: twin.port, sessionToken: twin.sessionToken })),
    reads: new DynamoAudienceReads(table.db, table.tableName),
    store: new DynamoUnsubscribeStore(table.db, table.tableName),
    clock: { now: () => new Date() },
    log,
  };
  const page = makePage(deps);
  const post = makeUnsubscribe(deps);
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      const pathToken = (req.url ?? '').split('/unsubscribe/')[1] ?? '';
      const event = httpEvent({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        routeKey: `${req.method} /unsubscribe/{token}`,
        token: null,
        pathParameters: { token: pathToken },
        ...(req.method === 'POST'
          ? { body, headers: { 'content-type': String(req.headers['content-type'] ?? '') } }
          : {}),
      });
      const answer = (await (req.method === 'POST' ? post : page)(event, context())) as {
        statusCode: number;
        headers: Record<string, string>;
        body: string;
      };
      res.writeHead(answer.statusCode, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await Promise.all([table?.stop(), twin?.stop()]);
});

const choices = async () =>
  Object.fromEntries(
    (await new DynamoAudienceReads(table.db, table.tableName).choicesOf(contact.id)).map((c) => [
      c.topic_id,
      c.subscription,
    ]),
  );

describe('the preference page in a browser', () => {
  it('shows the topics with their choices, script off, changes nothing when opened, and saves the form', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const response = await page.goto(`${origin}/unsubscribe/${token}`);
    expect(response?.status()).toBe(200);
    await expect(page.title()).resolves.toBe('Email preferences');
    expect(await page.getByRole('group', { name: 'Product news' }).isVisible()).toBe(true);
    expect(await page.getByRole('group', { name: 'Offers' }).isVisible()).toBe(true);
    expect(
      await page
        .getByRole('group', { name: 'Product news' })
        .getByLabel('Subscribed', { exact: true })
        .isChecked(),
    ).toBe(true);
    expect(
      await page
        .getByRole('group', { name: 'Offers' })
        .getByLabel('Unsubscribed', { exact: true })
        .isChecked(),
    ).toBe(true);
    expect(await choices()).toEqual({});
    await page
      .getByRole('group', { name: 'Product news' })
      .getByLabel('Unsubscribed', { exact: true })
      .check();
    await page.getByRole('group', { name: 'Offers' }).getByLabel('Subscribed', { exact: true }).check();
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toBe('Your preferences are saved.');
    expect(await choices()).toEqual({ [news.id]: 'opt_out', [offers.id]: 'opt_in' });
    expect(
      await page
        .getByRole('group', { name: 'Product news' })
        .getByLabel('Unsubscribed', { exact: true })
        .isChecked(),
    ).toBe(true);
    // Nothing the page's policy blocked (no script, no resource).
    expect(errors).toEqual([]);
    await context.close();
  });
});

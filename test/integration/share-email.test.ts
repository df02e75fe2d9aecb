/**
 * Sharing an email (issue 39, item 5): POST /v1/emails/{id}/share in Resend's shape, called by the
 * official SDK's `emails.share`, and the page its link opens (GET /share/{token}) without a key,
 * through the handlers with API Gateway v2 events, the table on dynalite.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { DynamoShareStore } from '../../functions/adapters/dynamodb/share-store.js';
import { keys } from '../../functions/adapters/dynamodb/table.js';
import { sendEmailSchema, toContent } from '../../functions/emails/email.js';
import { hashShareToken, SHARE_VIEWS_PER_MINUTE } from '../../functions/emails/share.js';
import { SHARE_PAGE_CSP } from '../../functions/emails/share-page.js';
import { makeHandler as makeShowShared } from '../../functions/handlers/get-shared-email.js';
import { makeHandler as makeShare } from '../../functions/handlers/share-email.js';
import { parseInput } from '../../functions/http/middleware.js';
import { newEmailId } from '../../functions/shared/ids.js';
import type { Clock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { fullAccessKey, MemoryContentStore } from '../support/fakes.js';
import { expectResendShape } from '../support/resend-schema.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let token: string;
let emailId: string;
let server: Server;
let baseUrl: string;
let nowMs = Date.parse('2026-11-28T12:00:00Z');
const clock: Clock = { now: () => new Date(nowMs) };
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const content = new MemoryContentStore();

const shareDeps = () => ({ apiKeys: repos.apiKeys, emails: repos.emails, shares: shares(), clock, log });
const shares = () => new DynamoShareStore(table.db, table.tableName);
const pageDeps = () => ({ shares: shares(), emails: repos.emails, content, clock, log });

async function share(id: string, body?: unknown) {
  const event = httpEvent({
    method: 'POST',
    path: `/v1/emails/${id}/share`,
    routeKey: 'POST /v1/emails/{id}/share',
    token,
    body,
    pathParameters: { id },
  });
  const response = (await makeShare(shareDeps())(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode, body: parseBody(response) };
}

async function open(linkToken: string) {
  const event = httpEvent({
    method: 'GET',
    path: `/share/${linkToken}`,
    routeKey: 'GET /share/{token}',
    token: null,
    pathParameters: { token: linkToken },
  });
  return (await makeShowShared(pageDeps())(event, context())) as APIGatewayProxyStructuredResultV2 & {
    body: string;
    headers: Record<string, string>;
  };
}

const tokenOf = (url: string) => new URL(url).pathname.replace('/share/', '');

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  token = await fullAccessKey(repos.apiKeys);
  emailId = newEmailId();
  await repos.emails.create({
    id: emailId,
    created_at: new Date(nowMs).toISOString(),
    content: toContent(
      parseInput(sendEmailSchema, {
        from: 'Acme <hello@acme.test>',
        to: ['ann@example.test'],
        bcc: ['archive@acme.test'],
        subject: 'Your <receipt>',
        html: '<p>Paid</p><img src=x onerror="parent.document.title=\'ran\'"><script>alert(1)</script>',
        headers: { 'X-Secret': 'internal' },
      }),
    ),
  });
  // The official SDK, over HTTP, against the share handler (its answer as API Gateway would give it).
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', async () => {
      const id = /\/v1\/emails\/([^/]+)\/share$/.exec(req.url ?? '')?.[1] ?? '';
      const event = httpEvent({
        method: req.method ?? 'POST',
        path: req.url ?? '',
        routeKey: 'POST /v1/emails/{id}/share',
        token: null,
        headers: Object.fromEntries(
          Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
        ),
        body: body || undefined,
        pathParameters: { id },
      });
      const answer = (await makeShare(shareDeps())(event, context())) as APIGatewayProxyStructuredResultV2;
      res.writeHead(answer.statusCode ?? 500, answer.headers as Record<string, string>);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await table?.stop();
});

describe('POST /v1/emails/{id}/share', () => {
  it("answers Resend's shape to the official SDK's emails.share, a link on the host it was asked at", async () => {
    const resend = new Resend(token, { baseUrl });
    const { data, error } = await resend.emails.share(emailId, { expiresIn: '2 hours' });
    expect(error).toBeNull();
    expectResendShape(data, 'ShareEmailResponse');
    expect(data).toMatchObject({ object: 'email', id: emailId });
    const url = new URL(String(data?.url));
    expect(url.origin).toBe(`https://${new URL(baseUrl).host}`);
    const opened = await open(tokenOf(url.href));
    expect(opened.statusCode).toBe(200);
    // And with no duration (the SDK sends `{}`): Resend's 48 hours.
    const plain = await resend.emails.share(emailId);
    expect(plain.error).toBeNull();
  });

  it('makes a token of 256 random bits (43 base64url characters), stored only as its SHA-256 with the expiry', async () => {
    const answer = await share(emailId, { expires_in: '10m' });
    expect(answer.status).toBe(200);
    const linkToken = tokenOf(answer.body.url);
    expect(linkToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(linkToken, 'base64url')).toHaveLength(32);
    const { Item } = await table.db.send(
      new GetCommand({
        TableName: table.tableName,
        Key: { pk: keys.share(hashShareToken(linkToken)), sk: keys.shareSk },
      }),
    );
    expect(Item).toMatchObject({ email_id: emailId, expires_ms: nowMs + 600_000 });
    expect(Item?.expires_at).toBe(Math.ceil((nowMs + 600_000) / 1000));
    // Nowhere in the table is the token itself.
    const { Items = [] } = await table.db.send(new ScanCommand({ TableName: table.tableName }));
    expect(JSON.stringify(Items)).not.toContain(linkToken);
  });

  it("takes Resend's duration strings, at most 48 hours, and no body at all", async () => {
    for (const [given, ms] of [
      ['10m', 600_000],
      ['2 hours', 7_200_000],
      ['1 day', 86_400_000],
      ['48h', 172_800_000],
      ['10s', 10_000],
    ] as const) {
      const answer = await share(emailId, { expires_in: given });
      expect(answer.status, given).toBe(200);
      const { Item } = await table.db.send(
        new GetCommand({
          TableName: table.tableName,
          Key: { pk: keys.share(hashShareToken(tokenOf(answer.body.url))), sk: keys.shareSk },
        }),
      );
      expect(Item?.expires_ms, given).toBe(nowMs + ms);
    }
    for (const wrong of ['49h', '3 days', 'soon', '10', '-5m', ''])
      expect((await share(emailId, { expires_in: wrong })).status, wrong).toBe(400);
    expect((await share(emailId)).status).toBe(200);
  });

  it('answers 404 for an email that does not exist', async () => {
    expect((await share(newEmailId(), {})).status).toBe(404);
    expect((await share('not-an-id', {})).status).toBe(404);
  });
});

describe('GET /share/{token}', () => {
  it('shows the email read-only without a key: no Bcc, no headers, its HTML in a sandboxed frame under its own policy', async () => {
    const linkToken = tokenOf((await share(emailId, { expires_in: '1h' })).body.url);
    const page = await open(linkToken);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(SHARE_PAGE_CSP);
    expect(page.headers['content-security-policy']).not.toContain('script-src');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Your &#60;receipt&#62;');
    expect(page.body).toContain('ann@example.test');
    expect(page.body).not.toContain('archive@acme.test');
    expect(page.body).not.toContain('X-Secret');
    expect(page.body).toContain('<iframe title="The email\'s HTML" sandbox="" srcdoc="');
    // The email's markup only inside the frame's escaped srcdoc, never as the page's own.
    expect(page.body).not.toContain('<script>');
    expect(page.body).not.toContain('<img src=x');
  });

  it('refuses an altered token, a malformed one and an unknown one with the same 404 page', async () => {
    const linkToken = tokenOf((await share(emailId, { expires_in: '1h' })).body.url);
    const last = linkToken.at(-1) === 'A' ? 'B' : 'A';
    const altered = `${linkToken.slice(0, -1)}${last}`;
    const pages = await Promise.all(
      [altered, `${linkToken.slice(1)}`, `${linkToken}x`, 'A'.repeat(43), '..'].map(open),
    );
    for (const page of pages) expect(page.statusCode).toBe(404);
    expect(new Set(pages.map((page) => page.body)).size).toBe(1);
    expect((await open(linkToken)).statusCode).toBe(200);
  });

  it('stops at its expiry', async () => {
    const linkToken = tokenOf((await share(emailId, { expires_in: '10s' })).body.url);
    expect((await open(linkToken)).statusCode).toBe(200);
    nowMs += 9_999;
    expect((await open(linkToken)).statusCode).toBe(200);
    nowMs += 1;
    const expired = await open(linkToken);
    expect(expired.statusCode).toBe(404);
    expect(expired.body).toContain('has expired');
  });

  it(`throttles one link at ${SHARE_VIEWS_PER_MINUTE} views a minute, with Retry-After, then opens again`, async () => {
    nowMs = Math.ceil(nowMs / 60_000) * 60_000; // the start of a minute
    const linkToken = tokenOf((await share(emailId, { expires_in: '1h' })).body.url);
    for (let i = 0; i < SHARE_VIEWS_PER_MINUTE; i++) expect((await open(linkToken)).statusCode).toBe(200);
    nowMs += 15_000;
    const refused = await open(linkToken);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('45');
    // Another link to the same email has a window of its own.
    expect((await open(tokenOf((await share(emailId, {})).body.url))).statusCode).toBe(200);
    nowMs += 45_000;
    expect((await open(linkToken)).statusCode).toBe(200);
  });

  it('counts a view that finds its window started by another view at the same moment, far under the limit', async () => {
    const start = Math.ceil(nowMs / 60_000) * 60_000 + 60_000; // the start of a minute
    const hash = `race-${start}`;
    await shares().create({ hash, email_id: emailId, expires_ms: start + 3_600_000 });
    // Seen in the minute before: the item's window is an old one.
    expect((await shares().open(hash, start - 1_000)).kind).toBe('open');
    // Two views at the start of the minute: the second's count fails on the old window; before it
    // reads the item, the first starts the new window (n = 1).
    let raced = false;
    const send = (command: unknown) => {
      if (command instanceof GetCommand && !raced) {
        raced = true;
        return shares()
          .open(hash, start)
          .then((first) => {
            expect(first.kind).toBe('open');
            return table.db.send(command);
          });
      }
      return table.db.send(command as never);
    };
    const second = await new DynamoShareStore({ send } as never, table.tableName).open(hash, start);
    expect(raced).toBe(true);
    expect(second.kind).toBe('open');
    const { Item } = await table.db.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: keys.share(hash), sk: keys.shareSk } }),
    );
    expect(Item).toMatchObject({ w: start / 60_000, n: 2 });
  });
});

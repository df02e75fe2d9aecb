import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_RATE_LIMIT } from '../../functions/api-keys/console-budget.js';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import { type httpsClient, waitFor } from '../support/https.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The console stays within its means: every page's requests to the API, measured through the
 * browser's own request log (Resource Timing: when each request started, by the page's clock),
 * never number more than CONSOLE_RATE_LIMIT (5) in any one second; a webhook with 20 messages
 * costs one request a refresh, not one per message; a 429 is waited out for its Retry-After, not
 * shown; and a person browsing leaves an application sending with the same key its full rate.
 * The service runs with the real per-key limit (10 a second), not the browser tests' usual 1000.
 */
let run: ConsoleRun;
let api: ReturnType<typeof httpsClient>;
let page: Page;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const ids: Record<string, string> = {};

/** The test's own API calls, at the same key's limit: a 429 is waited out here too. */
async function call(method: string, path: string, body?: unknown) {
  const answer = await waitFor(
    () => api.call(method, path, body === undefined ? {} : { body }),
    (r) => r.status !== 429,
  );
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.json)}`).toBeLessThan(300);
  return answer.json;
}

beforeAll(async () => {
  run = await startConsole({ rateLimitPerSecond: 10 });
  ({ api, page } = run);
  receiver = await startReceiver();
  await run.verifiedDomain('acme.test');
  const hook = await call('POST', '/webhooks', {
    endpoint: receiver.url,
    events: ['email.sent', 'email.delivered'],
  });
  ids.webhook = hook.id;
  // Ten emails in one request: twenty messages to the webhook (sent, delivered).
  const sent = await call(
    'POST',
    '/emails/batch',
    Array.from({ length: 10 }, (_, i) => ({
      from: 'Acme <hello@acme.test>',
      to: `success+${i}@simulator.amazonses.com`,
      subject: `Rate ${i}`,
      text: 'x',
    })),
  );
  ids.email = sent.data[0].id;
  await waitFor(
    async () => receiver.accepted().length,
    (n) => n >= 20,
    30_000,
  );
  expect(receiver.accepted().length).toBeGreaterThanOrEqual(20);
  ids.domain = (await call('GET', '/domains')).data[0].id;
  ids.log = (await call('GET', '/logs?limit=1')).data[0].id;
  // The browser keeps every request's timing, not the default 250.
  await page.addInitScript(() => performance.setResourceTimingBufferSize(100_000));
  await run.signIn();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await run?.stop();
});

/** Opens a page of the console as a link does (the hash changes, the document stays); when, by the page's clock. */
const go = (hash: string): Promise<number> =>
  page.evaluate((h) => {
    (globalThis as unknown as { location: { hash: string } }).location.hash = h;
    return performance.now();
  }, hash);

/** Every request of this document to the API, from the browser's log: when it started (ms) and what. */
const apiRequests = (): Promise<{ at: number; url: string }[]> =>
  page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .filter((entry) => new URL(entry.name).pathname.startsWith('/v1/'))
      .map((entry) => ({ at: entry.startTime, url: entry.name })),
  );

/** The most requests that started within any one second. */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Every page of the console (and one of each kind of item), as a person opens them. */
const PAGES = () => [
  '#/',
  '#/emails',
  `#/emails/${ids.email}`,
  '#/receiving',
  '#/domains',
  `#/domains/${ids.domain}`,
  '#/api-keys',
  '#/webhooks',
  `#/webhooks/${ids.webhook}`,
  '#/suppressions',
  '#/logs',
  `#/logs/${ids.log}`,
];

/** How long each page stays open: past one refresh of the pages that refresh every 3 s. */
const DWELL_MS = 4000;

describe("the console's request rate", () => {
  it('no page makes more than 5 requests a second (the browser’s request log), a webhook’s page one a refresh', async () => {
    // A request enters the log when its answer is in, with the time it started: each page's
    // requests are those that started while it was open, read once every answer is in.
    const visits: { page: string; from: number; to: number }[] = [];
    for (const hash of PAGES()) {
      const from = await go(hash);
      await page.locator('main h1').first().waitFor();
      if (hash === `#/webhooks/${ids.webhook}`) await page.locator('li.message').nth(19).waitFor();
      await page.waitForTimeout(DWELL_MS); // the page stays open, as a person reads it
      visits.push({
        page: hash.replace(/_[0-9a-z]+$/, '_…'),
        from,
        to: await page.evaluate(() => performance.now()),
      });
    }
    await go('#/suppressions');
    await page.getByRole('heading', { name: 'Suppressions', exact: true }).waitFor();
    await page.waitForTimeout(2000); // the last pages' answers come in
    const all = await apiRequests();
    const measured = visits.map((visit) => {
      const requests = all.filter((r) => r.at >= visit.from && r.at < visit.to);
      return { ...visit, requests, busiest: busiestSecond(requests.map((r) => r.at)) };
    });
    console.table(
      measured.map((m) => ({ page: m.page, requests: m.requests.length, 'most in a second': m.busiest })),
    );
    for (const m of measured) expect(m.busiest, m.page).toBeLessThanOrEqual(CONSOLE_RATE_LIMIT);
    // And over the whole visit, page changes included.
    expect(busiestSecond(all.map((r) => r.at))).toBeLessThanOrEqual(CONSOLE_RATE_LIMIT);
    // The webhook's 20 messages and their attempts: one request a refresh, none per message.
    const webhook = measured.find((m) => m.page === '#/webhooks/wh_…')?.requests ?? [];
    expect(webhook.filter((r) => r.url.includes('/attempts'))).toEqual([]);
    const lists = webhook.filter((r) => new URL(r.url).pathname.endsWith('/events'));
    expect(lists.length).toBeGreaterThanOrEqual(1);
    expect(lists.every((r) => new URL(r.url).searchParams.get('include') === 'attempts')).toBe(true);
    expect(webhook.length).toBeLessThanOrEqual(lists.length + 1); // and the webhook itself
  });

  it('paces a burst: clicks that ask for more than 5 requests in a second are spread over seconds', async () => {
    await go('#/domains');
    await page.getByRole('heading', { name: 'Domains', exact: true }).waitFor();
    const before = (await apiRequests()).length;
    // Twelve pages in quick succession, each asking at once.
    for (let i = 0; i < 12; i++) await go(i % 2 ? '#/api-keys' : '#/domains');
    await page.waitForTimeout(3500);
    const burst = (await apiRequests()).slice(before);
    expect(burst.length).toBeGreaterThan(CONSOLE_RATE_LIMIT);
    expect(busiestSecond(burst.map((r) => r.at))).toBeLessThanOrEqual(CONSOLE_RATE_LIMIT);
  });

  it('waits out a 429 for its Retry-After and shows the page, not the refusal', async () => {
    let refusedAt = 0;
    let retriedAt = 0;
    await page.route('**/v1/suppressions*', async (route) => {
      if (!refusedAt) {
        refusedAt = Date.now();
        await route.fulfill({
          status: 429,
          headers: { 'retry-after': '2', 'content-type': 'application/json' },
          body: JSON.stringify({
            statusCode: 429,
            name: 'rate_limit_exceeded',
            message: 'Too many requests: this API key may make 5 requests per second. Retry after 2 seconds.',
          }),
        });
        return;
      }
      retriedAt ||= Date.now();
      await route.continue();
    });
    await go('#/suppressions');
    await page.getByRole('heading', { name: 'Suppressions', exact: true }).waitFor();
    await page.getByText('No address is suppressed.').waitFor({ timeout: 10_000 });
    expect(refusedAt).toBeGreaterThan(0);
    expect(retriedAt - refusedAt).toBeGreaterThanOrEqual(1900);
    expect(await page.getByText('Too many requests').count()).toBe(0);
    await page.unroute('**/v1/suppressions*');
  });

  it('leaves an application sending with the same key its full 10 a second while a person browses', async () => {
    await go('#/domains');
    await page.getByRole('heading', { name: 'Domains', exact: true }).waitFor();
    const before = (await apiRequests()).length;
    // The person clicks through pages as fast as the console goes (5 a second)…
    for (let i = 0; i < 16; i++) await go(i % 2 ? '#/api-keys' : '#/domains');
    // …while the application makes its 10 at once, twice, a second apart.
    const codes: number[] = [];
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => api.call('GET', '/domains')));
      codes.push(...answers.map((a) => a.status));
      expect(answers[0]?.headers.get('ratelimit-limit')).toBe('10');
      await page.waitForTimeout(1100);
    }
    expect(codes).toEqual(Array(20).fill(200));
    // The console did browse meanwhile, at its pace.
    const browsing = (await apiRequests()).slice(before);
    expect(browsing.length).toBeGreaterThanOrEqual(CONSOLE_RATE_LIMIT);
    expect(busiestSecond(browsing.map((r) => r.at))).toBeLessThanOrEqual(CONSOLE_RATE_LIMIT);
  });

  it('says an error once: a refused domain name is not repeated in parentheses', async () => {
    await go('#/domains');
    await page.getByLabel('Domain', { exact: true }).fill('shop test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const note = page.getByText('must not contain spaces', { exact: false });
    await note.first().waitFor();
    const text = await page.locator('main').innerText();
    expect(text.split('must not contain spaces').length - 1).toBe(1);
  });
});

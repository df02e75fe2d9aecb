import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import { waitFor } from '../support/https.js';
import { layoutProblems } from '../support/layout.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Every page of the console, and the API reference at /docs, on a phone (375 px) and a laptop
 * (1280 px), with data that is hard to lay out: long addresses, many recipients, every badge, a long
 * domain, a webhook endpoint with a long path. On both: nothing wider than the window, no box that
 * scrolls sideways or spills, no badge, address or word broken inside itself (test/support/layout.ts);
 * below 600 px, every list stacked cards. The pages are the navigation's and the first detail page
 * each links to, found in the console itself, so a page added later is looked at too.
 */
let run: ConsoleRun;
let page: Page;
let origin: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const LONG_TO = [
  'accounts-payable.department@acme.test',
  'Ann Sender-Longname <ann.sender-with-a-rather-long-name@accounts.very-long-subdomain.example.org>',
  'complaint@simulator.amazonses.com',
  'bounce@simulator.amazonses.com',
];
const RECEIVED_ID = '0193c4a2-8b1e-7d3c-9a4f-2b6e8c1d0f01';
const RECEIVED = {
  object: 'email',
  id: RECEIVED_ID,
  from: 'Ann Sender <ann.sender-with-a-rather-long-name@accounts.very-long-subdomain.example.org>',
  to: ['billing@acme.test', 'accounts-payable.department@acme.test'],
  cc: [],
  bcc: [],
  reply_to: [],
  received_for: ['billing@acme.test'],
  subject: 'Invoice 42 for the quarterly subscription renewal of the enterprise plan',
  message_id: '<invoice-42.0193c4a2-8b1e-7d3c-9a4f-2b6e8c1d0f01@mail.very-long-subdomain.example.org>',
  in_reply_to: null,
  references: [],
  created_at: '2026-11-28T08:00:00.000Z',
  html: '<p>Your invoice</p>',
  text: 'Your invoice',
  headers: { 'x-mailer': 'Stub 1.0' },
  attachments: [],
  authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
  spam: 'pass',
  virus: 'pass',
  raw: null,
};

beforeAll(async () => {
  run = await startConsole();
  ({ page, origin } = run);
  const { api } = run;
  await run.verifiedDomain('acme.test');
  expect(
    (
      await api.call('POST', '/domains', {
        body: { domain: 'transactional-mail.very-long-subdomain.acme.test' },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await api.call('POST', '/api-keys', {
        body: { name: 'Production billing service, quarterly invoices' },
      })
    ).status,
  ).toBe(201);
  receiver = await startReceiver();
  expect(
    (
      await api.call('POST', '/webhooks', {
        body: {
          endpoint: `${receiver.url}/a-rather-long-path/for-the-billing-service?token=0123456789abcdef`,
          events: ['email.sent', 'email.delivered', 'email.bounced', 'email.complained'],
        },
      })
    ).status,
  ).toBe(201);
  const sent = await api.call('POST', '/emails', {
    body: {
      from: 'Acme Billing Department <billing.notifications@acme.test>',
      to: LONG_TO,
      subject: 'Your quarterly invoice for the enterprise subscription is ready',
      html: '<p>Hello</p>',
      tags: [{ name: 'category', value: 'quarterly_invoice' }],
    },
  });
  expect(sent.status).toBe(200);
  // Settled: its badge (and the suppressions it made) are on the pages before they are looked at.
  const settled = await waitFor(
    () => api.call('GET', '/suppressions'),
    (r) => (r.json?.data?.length ?? 0) >= 2,
    20_000,
  );
  expect(settled.json.data.length, 'the bounce and the complaint suppressed').toBeGreaterThanOrEqual(2);
  // Received mail comes from SES on AWS; here the API's answers are stood in for.
  await page.route(/\/v1\/emails\/receiving(\/|\?|$)/, (route) => {
    const path = new URL(route.request().url()).pathname.replace('/v1/emails/receiving', '');
    const json = (body: unknown) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
    if (path === '') {
      const { html, text, headers, raw, object, ...listed } = RECEIVED;
      return json({ object: 'list', has_more: false, data: [listed] });
    }
    if (path.endsWith('/attachments')) return json({ object: 'list', has_more: false, data: [] });
    return json(RECEIVED);
  });
  await run.signIn();
}, 180_000);
afterAll(async () => {
  await receiver?.close();
  await run?.stop();
});

/** The page is drawn: its heading is there and nothing says "Loading…". */
async function drawn(hash: string) {
  await page.goto(`${origin}/${hash}`);
  await page.locator('main h1').first().waitFor({ timeout: 10_000 });
  await expect.poll(() => page.locator('main').getByText('Loading…').count(), { timeout: 10_000 }).toBe(0);
}

/** The navigation's pages, then the first page of each kind their lists link to (`#/emails/em_…`). */
async function consolePages(): Promise<string[]> {
  const nav = await page.$$eval('header nav a', (links) => links.map((a) => a.getAttribute('href') ?? ''));
  const pages = [...nav];
  for (const hash of nav) {
    await drawn(hash);
    const section = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
    if (!section) continue;
    const details = await page.$$eval(`main a[href^="#/${section}/"]`, (links) =>
      links.map((a) => a.getAttribute('href') ?? '').filter(Boolean),
    );
    if (details[0] && !pages.includes(details[0])) pages.push(details[0]);
  }
  return pages;
}

/** What the checks must catch: a word broken, a badge broken, an address broken, a box scrolling sideways, a table, a page too wide. */
const BAD_LAYOUT = `<p style="width:12rem;overflow-wrap:anywhere">An unbreakable-looking wordthatiswaytoolongtofitinasmallbox here</p>
         <p><span class="badge" style="white-space:normal;overflow-wrap:anywhere;display:inline-block;width:3rem">complained</span></p>
         <div style="overflow-x:auto;width:5rem"><div style="width:20rem">wide</div></div>
         <table style="display:table"><tr><td>cell</td></tr></table>
         <p><span class="address" style="overflow-wrap:anywhere;display:inline-block;width:4rem">someone@example.org</span></p>
         <div style="width:600px">too wide for the window</div>`;

describe('every page at 375 and 1280 px', () => {
  let pages: string[] = [];
  it('finds the pages: the navigation and a detail page of each list', async () => {
    // A user of the API sees the domain's DNS records, an email's recipients, a webhook's messages.
    await expect
      .poll(async () => {
        await drawn('#/webhooks');
        return page.locator('main a[href^="#/webhooks/"]').count();
      })
      .toBeGreaterThan(0);
    pages = await consolePages();
    for (const expected of ['#/', '#/emails', '#/domains', '#/webhooks', '#/logs', '#/receiving'])
      expect(pages).toContain(expected);
    for (const detail of ['#/emails/', '#/domains/', '#/webhooks/', '#/logs/', '#/receiving/'])
      expect(
        pages.some((p) => p.startsWith(detail)),
        detail,
      ).toBe(true);
  });

  for (const width of [375, 1280])
    it(`lays every page out at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 800 });
      const found: Record<string, string[]> = {};
      for (const hash of pages) {
        await drawn(hash);
        const problems = await layoutProblems(page, { cards: width < 600 });
        if (width === 375 && hash.startsWith('#/emails/'))
          await page.screenshot({ path: 'docs/console/phone.png', fullPage: true });
        if (problems.length) found[hash] = problems;
      }
      await page.goto(`${origin}/docs`);
      const docs = await layoutProblems(page, { cards: false });
      if (docs.length) found['/docs'] = docs;
      expect(found).toEqual({});
      await page.setViewportSize({ width: 1280, height: 800 });
    });

  it('checks its own checks: a wide page, a sideways scroll, a broken word and badge, a table at 375 px', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await drawn('#/emails');
    await page.evaluate(
      `document.querySelector('main').insertAdjacentHTML('beforeend', ${JSON.stringify(BAD_LAYOUT)})`,
    );
    const problems = await layoutProblems(page, { cards: true });
    expect(problems.some((p) => p.startsWith('the page is'))).toBe(true);
    expect(problems.some((p) => p.includes('scrolls sideways'))).toBe(true);
    expect(problems.some((p) => p.startsWith('span.badge breaks inside a word'))).toBe(true);
    expect(problems.some((p) => p.startsWith('p breaks inside a word'))).toBe(true);
    expect(problems.some((p) => p.startsWith('span.address breaks inside a word'))).toBe(true);
    expect(problems.some((p) => p.includes('is still a table'))).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

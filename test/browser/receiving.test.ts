import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import { waitFor } from '../support/https.js';

/**
 * The Receiving page in a real browser (headless Chromium) over the local service: the list of
 * received mail in pages, a received email's page (its addresses, verdicts as badges, its HTML in
 * the sandboxed preview where no script runs, the text, headers folded, attachments and raw message
 * with their links), a message SES flagged as a virus (no raw, no attachment links, and why), the
 * requests each view makes (one for the list; the email and its attachments), and both pages at
 * 375 px with badges and addresses never broken inside a word. Screenshots: docs/console/receiving.png,
 * docs/console/received-email.png.
 *
 * Most of it stubs the receiving API's answers in the browser (`page.route`, stubReceiving below), in
 * the shapes of Resend's GetReceivedEmailResponse, ListReceivedEmailsResponse and
 * ListAttachmentsResponse plus `raw`, `received_for` and the verdicts: what the local twin cannot
 * give (SES's virus and spam verdicts: it shows `unknown`) or the API never gives (a `javascript:`
 * link). The last part goes through the local service itself: a message sent over its inbound SMTP
 * endpoint, shown on the page with its attachment and raw message downloadable from the local S3.
 */
let run: ConsoleRun;
let page: Page;
let origin: string;

/** The requests the page made to the receiving API, by path and query. */
const requests: string[] = [];
const asked = (path: string) => requests.filter((r) => r === path).length;

// A 1×1 PNG, inline in the HTML as the API's default html_format=data_uri gives it.
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const CLEAN_ID = '0193c4a2-8b1e-7d3c-9a4f-2b6e8c1d0f01';
const VIRUS_ID = '0193c4a2-8b1e-7d3c-9a4f-2b6e8c1d0f02';
const OLDER_ID = '0193c4a2-8b1e-7d3c-9a4f-2b6e8c1d0f03';
const LONG_FROM = 'Ann Sender <ann.sender-with-a-rather-long-name@accounts.very-long-subdomain.example.org>';
const HOSTILE_HTML = `<p style="color:#0a0">Your invoice <strong>42</strong></p><img alt="logo" src="data:image/png;base64,${PIXEL}"><script>document.body.append('RAN-'+'OK');parent.document.title="pwned";top.document.title="pwned"</script>`;
const later = () => new Date(Date.now() + 3_600_000).toISOString();

const attachment = (id: string, filename: string | null, extra: Record<string, unknown> = {}) => ({
  id,
  filename,
  content_type: 'application/pdf',
  content_id: null,
  content_disposition: 'attachment',
  size: 2048,
  ...extra,
});

const CLEAN = {
  object: 'email',
  id: CLEAN_ID,
  from: LONG_FROM,
  to: ['billing@acme.test', 'accounts-payable.department@acme.test'],
  cc: ['cc@acme.test'],
  bcc: [],
  reply_to: ['replies@example.org'],
  received_for: ['billing@acme.test'],
  subject: 'Invoice <b>42</b>',
  message_id: '<invoice-42@example.org>',
  in_reply_to: '<question-1@acme.test>',
  references: ['<question-1@acme.test>'],
  created_at: '2026-11-28T08:00:00.000Z',
  html: HOSTILE_HTML,
  text: 'Your invoice 42',
  headers: { 'x-mailer': 'Stub 1.0', 'content-type': 'multipart/mixed; boundary="b"', received: 'from mx' },
  attachments: [
    attachment('0193c4a2-0000-7000-8000-000000000001', 'invoice-42.pdf'),
    attachment('0193c4a2-0000-7000-8000-000000000002', 'evil.pdf'),
  ],
  authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
  spam: 'pass',
  virus: 'pass',
  raw: { download_url: `https://files.example/raw/${CLEAN_ID}?X-Amz-Signature=abc`, expires_at: later() },
};

const VIRUS = {
  ...CLEAN,
  id: VIRUS_ID,
  from: 'mallory@bad.example',
  to: ['support@acme.test'],
  cc: [],
  reply_to: [],
  received_for: ['support@acme.test'],
  subject: 'Open the attachment',
  in_reply_to: null,
  references: [],
  html: null,
  text: 'Open it.',
  attachments: [attachment('0193c4a2-0000-7000-8000-000000000003', 'payload.exe')],
  authentication: { spf: 'processing_failed', dkim: 'fail', dmarc: 'gray' },
  spam: 'fail',
  virus: 'fail',
  raw: null,
};

const OLDER = { ...CLEAN, id: OLDER_ID, subject: 'An older one', attachments: [] };

/** A list item: the email without its bodies and links, as the list gives it. */
const listed = ({ html, text, headers, raw, object, ...item }: typeof CLEAN | typeof VIRUS) => item;

/**
 * The stubbed receiving API (RECEIVED): the list in two pages (newest first: after the first page,
 * the older one), each email, and its attachments with links, none for the virus's, and one the
 * console must not link (`javascript:`, which the API never gives).
 */
async function stubReceiving(route: Route) {
  const url = new URL(route.request().url());
  requests.push(`${url.pathname}${url.search}`);
  const json = (body: unknown, status = 200) =>
    route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
  const path = url.pathname.replace('/v1/emails/receiving', '');
  if (path === '') {
    if (url.searchParams.get('after') === VIRUS_ID)
      return json({ object: 'list', has_more: false, data: [listed(OLDER)] });
    return json({ object: 'list', has_more: true, data: [listed(CLEAN), listed(VIRUS)] });
  }
  const [, id, rest] = path.split('/');
  const email = [CLEAN, VIRUS, OLDER].find((e) => e.id === id);
  if (!email) return json({ statusCode: 404, name: 'not_found', message: 'Received email not found' }, 404);
  if (rest === 'attachments')
    return json({
      object: 'list',
      has_more: false,
      data: email.attachments.map((a) =>
        email.virus === 'fail'
          ? a
          : {
              ...a,
              download_url:
                a.filename === 'evil.pdf' ? 'javascript:alert(1)' : `https://files.example/att/${a.id}`,
              expires_at: later(),
            },
      ),
    });
  return json(email);
}

const stubbed = (url: URL) => url.pathname.startsWith('/v1/emails/receiving');

beforeAll(async () => {
  run = await startConsole();
  ({ page, origin } = run);
  await page.route(stubbed, stubReceiving);
  await run.signIn();
});
afterAll(async () => {
  await run?.stop();
});

const scrollWidth = () => page.evaluate<number>('document.documentElement.scrollWidth');

/**
 * Where the rendered text of each element matching `selector` goes to a new line, as the two
 * characters around each break ("r@|a" is a break after an `@`). Measured with a Range per
 * character (the tests are type-checked without the DOM's types, hence the string).
 */
const lineBreaks = (selector: string) =>
  page.evaluate<string[]>(`(() => {
    const breaks = [];
    for (const element of document.querySelectorAll(${JSON.stringify(selector)})) {
      const text = [];
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (let i = 0; i < node.data.length; i++) text.push([node, i]);
      let top;
      let before = '';
      for (const [node, i] of text) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        const char = node.data[i];
        if (top !== undefined && rect.top > top + 2) breaks.push(before + '|' + char);
        top = rect.top;
        before = char;
      }
    }
    return breaks;
  })()`);

/** The breaks inside a word: a line may break only after a space, a comma or an `@`, or before a dot. */
const midWord = (breaks: string[]) =>
  breaks.filter((b) => {
    const [before = '', after = ''] = b.split('|');
    return !(/[ ,@]/.test(before) || after === '.');
  });

describe('the Receiving page', () => {
  it('lists received mail with one request a page: from, to, subject, received, attachments, verdicts', async () => {
    await page.getByRole('link', { name: 'Receiving', exact: true }).click();
    await page.getByRole('heading', { name: 'Receiving', level: 1 }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Invoice <b>42</b>' });
    await row.waitFor({ timeout: 10_000 });
    // Text, never markup.
    expect(await row.getByRole('link', { name: 'Invoice <b>42</b>' }).count()).toBe(1);
    expect(await row.getByRole('cell').nth(0).textContent()).toBe(LONG_FROM);
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(
      'billing@acme.test, accounts-payable.department@acme.test',
    );
    expect(await row.getByRole('cell').nth(4).textContent()).toBe('2');
    const verdicts = row.getByRole('list', { name: 'Verdicts' }).getByRole('listitem');
    expect(await verdicts.allTextContents()).toEqual([
      'SPF pass',
      'DKIM pass',
      'DMARC pass',
      'Spam none found',
      'Virus none found',
    ]);
    const virusRow = page.getByRole('row').filter({ hasText: 'Open the attachment' });
    expect(
      await virusRow.getByRole('list', { name: 'Verdicts' }).getByRole('listitem').allTextContents(),
    ).toEqual(['SPF not checked (SES failed)', 'DKIM fail', 'DMARC gray', 'Spam found', 'Virus found']);
    expect(await virusRow.locator('.verdict-bad').count()).toBe(3);
    await page.screenshot({ path: 'docs/console/receiving.png', fullPage: true });

    // The next page: the cursor is the last id of this one.
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByRole('link', { name: 'An older one' }).waitFor();
    expect(requests).toEqual([
      '/v1/emails/receiving?limit=20',
      `/v1/emails/receiving?limit=20&after=${VIRUS_ID}`,
    ]);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByRole('link', { name: 'Invoice <b>42</b>' }).waitFor();
  });

  it('shows a received email: addresses, verdicts, its HTML where no script runs, text, folded headers, links to its attachments and raw message', async () => {
    const title = await page.title();
    requests.length = 0;
    await page.getByRole('link', { name: 'Invoice <b>42</b>' }).click();
    expect(page.url()).toContain(`#/receiving/${CLEAN_ID}`);
    await page.getByRole('heading', { name: 'Invoice <b>42</b>', level: 1 }).waitFor({ timeout: 10_000 });
    const field = (name: string) =>
      page
        .locator('dl.fields > dt', { hasText: new RegExp(`^${name}$`) })
        .locator('xpath=following-sibling::dd[1]');
    expect(await field('From').textContent()).toBe(LONG_FROM);
    expect(await field('Received for').textContent()).toBe('billing@acme.test');
    expect(await field('Reply to').textContent()).toBe('replies@example.org');
    expect(await field('Message-ID').textContent()).toBe('<invoice-42@example.org>');
    expect(await field('In reply to').textContent()).toBe('<question-1@acme.test>');
    expect(await page.getByRole('list', { name: 'Verdicts' }).getByRole('listitem').count()).toBe(5);

    // The preview: a frame with no permission at all; its styles apply, its data: image shows, its script did not run.
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).toBe('');
    expect(await page.locator('iframe.preview').getAttribute('title')).toBeTruthy();
    const preview = page.frameLocator('iframe.preview');
    await preview.getByText('Your invoice').waitFor();
    await expect
      .poll(() =>
        preview.locator('img').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(1);
    expect(await preview.getByText('RAN-OK').count()).toBe(0);
    expect(await page.title()).toBe(title);
    await page.getByText('Your invoice 42', { exact: true }).waitFor();

    // Headers: folded until asked.
    const headers = page.locator('details.headers');
    expect(await headers.getAttribute('open')).toBeNull();
    expect(await page.getByText('Stub 1.0').isVisible()).toBe(false);
    await page.getByText('Show the 3 headers').click();
    await page.getByText('Stub 1.0').waitFor({ state: 'visible' });

    // Attachments and the raw message: links that open apart from the console; never a javascript: one.
    const pdf = page.getByRole('link', { name: 'invoice-42.pdf' });
    await pdf.waitFor();
    expect(await pdf.getAttribute('href')).toBe(
      'https://files.example/att/0193c4a2-0000-7000-8000-000000000001',
    );
    expect(await pdf.getAttribute('rel')).toBe('noopener noreferrer');
    await page.getByText('evil.pdf').waitFor();
    expect(await page.getByRole('link', { name: 'evil.pdf' }).count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    const raw = page.getByRole('link', { name: 'Download the raw message' });
    expect(await raw.getAttribute('href')).toBe(CLEAN.raw.download_url);
    expect(await raw.getAttribute('target')).toBe('_blank');
    await page.screenshot({ path: 'docs/console/received-email.png', fullPage: true });

    // Two requests for the page: the email and its attachments, each once.
    expect(requests.sort()).toEqual([
      `/v1/emails/receiving/${CLEAN_ID}`,
      `/v1/emails/receiving/${CLEAN_ID}/attachments`,
    ]);
  });

  it('says why a message SES flagged as a virus offers no raw message and no attachment link', async () => {
    requests.length = 0;
    await page.goto(`${origin}/#/receiving/${VIRUS_ID}`);
    await page.getByRole('heading', { name: 'Open the attachment', level: 1 }).waitFor({ timeout: 10_000 });
    expect(await page.getByRole('note').textContent()).toContain('SES found a virus in this message.');
    await page.getByText('The raw message is not offered: SES found a virus in this message.').waitFor();
    await page.getByText('payload.exe').waitFor();
    expect(await page.getByRole('link', { name: 'payload.exe' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Download the raw message' }).count()).toBe(0);
    await page.getByText('No HTML part.').waitFor();
    expect(asked(`/v1/emails/receiving/${VIRUS_ID}`)).toBe(1);
    expect(asked(`/v1/emails/receiving/${VIRUS_ID}/attachments`)).toBe(1);
  });

  it('says a received email that does not exist is not found', async () => {
    await page.goto(`${origin}/#/receiving/0193c4a2-8b1e-7d3c-9a4f-ffffffffffff`);
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 })
      .toContain('Received email not found');
  });

  it('works at 375 px: no page wider than the screen, badges and addresses never broken inside a word', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of ['#/receiving', `#/receiving/${CLEAN_ID}`, `#/receiving/${VIRUS_ID}`]) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('ul.verdicts').first().waitFor({ timeout: 10_000 });
      expect(await scrollWidth(), hash).toBeLessThanOrEqual(375);
      // What a screen reader needs (axe-core is not among the dependencies): one page heading, every
      // link and button named, every verdict list labelled, the preview frame titled.
      expect(await page.locator('main h1').count(), hash).toBe(1);
      expect(
        await page.evaluate<number>(
          "[...document.querySelectorAll('a, button')].filter((e) => !(e.textContent.trim() || e.getAttribute('aria-label'))).length",
        ),
        hash,
      ).toBe(0);
      expect(await page.locator('ul.verdicts:not([aria-label])').count(), hash).toBe(0);
      expect(await page.locator('iframe:not([title])').count(), hash).toBe(0);
      // Each badge is one line.
      expect(await lineBreaks('.badge'), hash).toEqual([]);
      expect(midWord(await lineBreaks('.address')), hash).toEqual([]);
    }
    // The long sender does wrap on the email's page (so the check above looked at real breaks).
    await page.goto(`${origin}/#/receiving/${CLEAN_ID}`);
    await page.locator('dl.fields .address').first().waitFor({ timeout: 10_000 });
    const fromBreaks = await lineBreaks('dl.fields > dd:nth-of-type(1) .address');
    expect(fromBreaks.length).toBeGreaterThan(0);
    expect(midWord(fromBreaks)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('checks its own break test: a break inside a word is caught', () => {
    expect(midWord(['@|a', 'e|.', ',|b', ' |<'])).toEqual([]);
    // Inside a word, and after a hyphen (an address's hyphen is not hyphenation).
    expect(midWord(['d|e', '-|w'])).toEqual(['d|e', '-|w']);
  });
});

describe('the Receiving page over the local service', () => {
  it('shows a message received over SMTP, its HTML in the sandbox, its attachment and raw message downloadable', async () => {
    await page.unroute(stubbed, stubReceiving);
    const created = await run.api.call('POST', '/domains', {
      body: { domain: 'desk.test', capabilities: { receiving: 'enabled' } },
    });
    expect(created.status).toBe(201);
    const { host, port } = run.service.inboundSmtp;
    const transport = nodemailer.createTransport({ host, port, secure: false });
    const bytes = randomBytes(4096);
    // The receipt rules follow the domain through a queue and one writer: until then, 550.
    const sent = await waitFor(
      () =>
        transport
          .sendMail({
            from: 'Customer <customer@outside.test>',
            to: 'desk@desk.test',
            subject: 'Where is my order?',
            text: 'Order 1234 has not arrived.',
            html: '<p>Order <b>1234</b> has not arrived.</p><script>document.title="pwned"</script>',
            attachments: [
              { filename: 'receipt.bin', content: bytes, contentType: 'application/octet-stream' },
            ],
          })
          .then(
            () => true,
            () => false,
          ),
      (sent) => sent,
      30_000,
    );
    expect(sent, 'the receipt rules never took desk.test').toBe(true);
    const listed = await waitFor(
      () => run.api.call('GET', '/emails/receiving'),
      (r) => r.json?.data?.some((e: { subject: string }) => e.subject === 'Where is my order?'),
      30_000,
    );
    const id = listed.json.data.find((e: { subject: string }) => e.subject === 'Where is my order?').id;

    await page.goto(`${origin}/#/receiving`);
    const row = page.getByRole('row').filter({ hasText: 'Where is my order?' });
    await row.waitFor({ timeout: 10_000 });
    await row.getByRole('link', { name: 'Where is my order?' }).click();
    await page.getByRole('heading', { name: 'Where is my order?', level: 1 }).waitFor({ timeout: 10_000 });
    expect(page.url()).toContain(`#/receiving/${id}`);
    // The same sandbox as sent mail: no script of the email ran.
    const frame = page.locator('iframe');
    expect(await frame.getAttribute('sandbox')).not.toContain('allow-scripts');
    await expect
      .poll(() => frame.contentFrame().locator('b').textContent(), { timeout: 10_000 })
      .toBe('1234');
    expect(await page.title()).not.toBe('pwned');
    // The verdicts the local twin cannot compute show as unknown.
    expect(await page.locator('ul.verdicts').first().textContent()).toContain('unknown');
    // The attachment's and the raw message's links download from the local S3.
    const attachmentLink = page.getByRole('link', { name: /receipt\.bin/ });
    const attachmentUrl = (await attachmentLink.getAttribute('href')) as string;
    expect(Buffer.from(await (await fetch(attachmentUrl)).arrayBuffer()).equals(bytes)).toBe(true);
    const rawUrl = (await page.getByRole('link', { name: /raw/i }).first().getAttribute('href')) as string;
    expect(await (await fetch(rawUrl)).text()).toContain('Subject: Where is my order?');
  });
});

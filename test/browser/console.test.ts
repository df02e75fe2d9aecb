import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../local/service.js';
import { localTls } from '../../local/tls.js';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';

/**
 * The web console in a real browser (headless Chromium) over the local service: sign in with its key,
 * the overview, an email sent through the API watched to `delivered` in the list and on its page, its
 * HTML preview unable to run a script, sign out. Screenshots of the pages go to docs/console/.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let context: BrowserContext;
let page: Page;
let origin: string;
/** A remote image host on loopback (HTTPS, self-signed): the requests it got, by path. */
let images: Server;
let imageUrl: string;
const imageRequests: string[] = [];
// A 1×1 PNG.
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

let run: ConsoleRun;
beforeAll(async () => {
  run = await startConsole();
  ({ service, api, context, page, origin } = run);
  await run.verifiedDomain('acme.test');
  const tls = await localTls();
  images = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    imageRequests.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PIXEL);
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageUrl = `https://127.0.0.1:${(images.address() as AddressInfo).port}/pixel.png`;
});
afterAll(async () => {
  await new Promise((resolve) => (images ? images.close(resolve) : resolve(undefined)));
  await run?.stop();
});

/** The browser's getComputedStyle (the tests are type-checked without the DOM's types). */
type Styled = { getComputedStyle(element: unknown): { color: string } };

const sessionKey = () => page.evaluate<string>("Object.values(sessionStorage).join('|')");

describe('the web console', () => {
  it('signs in with an API key, kept in sessionStorage only, and opens on the overview', async () => {
    // Errors in the console other than the wrong key's 401 (a refused script or style would show here).
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && !m.text().includes('401') && errors.push(m.text()));
    await page.goto(`${origin}/`);
    await page.getByLabel('API key').fill('esk_not_a_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 })
      .toContain('sign in again');

    await page.getByLabel('API key').fill(service.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: 10_000 });
    for (const name of [
      'Overview',
      'Emails',
      'Receiving',
      'Domains',
      'API keys',
      'Webhooks',
      'Suppressions',
      'Logs',
    ])
      expect(await page.getByRole('link', { name, exact: true }).count(), name).toBe(1);
    await page.getByText('SES reviews accounts above 5.0 %').waitFor();
    await page.getByText('SES reviews accounts above 0.10 %').waitFor();
    expect(await sessionKey()).toBe(service.apiKey);
    expect(await page.evaluate<number>('localStorage.length + document.cookie.length')).toBe(0);
    expect(page.url()).not.toContain(service.apiKey);
    expect(errors).toEqual([]);
  });

  it('shows an email sent through the API reach delivered, in the list while open and on its page', async () => {
    const title = await page.title();
    // Hostile HTML: a script that would write in the frame (and change the console's title) if it ran,
    // styled text that should show, a remote image that must not load until asked.
    const html = `<p style="color:#0a0">Hello from the <strong>console</strong> test</p><script>document.body.append('RAN-'+'OK');parent.document.title="pwned";top.document.title="pwned";document.title="ran"</script><img src="${imageUrl}" alt="pixel">`;

    // The list is open before the email exists: it appears and reaches delivered with no reload.
    await page.getByRole('link', { name: 'Emails', exact: true }).click();
    await page.getByRole('heading', { name: 'Emails' }).waitFor();
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => frame === page.mainFrame() && navigations.push(frame.url()));
    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Console <b>check</b>',
        html,
        text: 'Hello from the console test',
        tags: [{ name: 'category', value: 'welcome' }],
        attachments: [{ filename: 'note.txt', content: Buffer.from('hello').toString('base64') }],
      },
    });
    expect(sent.status).toBe(200);
    const id = sent.json.id as string;
    // The subject is shown as text, never as markup.
    const row = page.getByRole('row').filter({ hasText: 'Console <b>check</b>' });
    await expect.poll(() => row.getByText('delivered').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(navigations).toEqual([]);
    await page.screenshot({ path: 'docs/console/emails.png', fullPage: true });

    await row.getByRole('link', { name: 'Console <b>check</b>' }).click();
    expect(page.url()).toContain(`#/emails/${id}`);
    await page.getByRole('heading', { name: 'Console <b>check</b>' }).waitFor();
    await expect
      .poll(() => page.locator('dl.fields dd').first().textContent(), { timeout: 20_000 })
      .toBe('delivered');
    await page.getByRole('cell', { name: 'success@simulator.amazonses.com' }).waitFor();
    await page.locator('ol.timeline').getByText('delivered').first().waitFor();
    await page.getByText('welcome').waitFor();
    // The attachment's link opens apart from the console, with no opener or referrer.
    const link = page.getByRole('link', { name: 'note.txt' });
    await link.waitFor({ timeout: 10_000 });
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');

    // The preview: a frame with no permission at all, whose script did not run.
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).toBe('');
    const preview = page.frameLocator('iframe.preview');
    await preview.getByText('Hello from the').waitFor();
    expect(await preview.getByText('RAN-OK').count()).toBe(0);
    expect(await page.title()).toBe(title);
    expect(
      await preview.locator('p').evaluate((p) => (globalThis as unknown as Styled).getComputedStyle(p).color),
    ).toBe('rgb(0, 170, 0)');
    // The remote image stays off until asked: not even asked for.
    const naturalWidth = () =>
      preview.locator('img').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    expect(await naturalWidth()).toBe(0);
    expect(imageRequests).toEqual([]);
    await page.screenshot({ path: 'docs/console/email.png', fullPage: true });
    await page.getByRole('button', { name: 'Load remote images' }).click();
    await expect.poll(() => imageRequests.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(naturalWidth, { timeout: 10_000 }).toBeGreaterThan(0);
    // Still no script ran.
    expect(await preview.getByText('RAN-OK').count()).toBe(0);
    expect(await page.title()).toBe(title);

    // The control: the same HTML in a frame that may run scripts does write RAN-OK, so the checks
    // above would see a script that ran.
    const control = await context.newPage();
    await control.setContent('<iframe sandbox="allow-scripts"></iframe>');
    await control.locator('iframe').evaluate((f, srcdoc) => {
      (f as unknown as { srcdoc: string }).srcdoc = srcdoc;
    }, html);
    await control.frameLocator('iframe').getByText('RAN-OK').waitFor({ timeout: 10_000 });
    await control.close();

    // The page keeps asking after the outcome, slower, for the events that come later (opens, clicks).
    const again = await page.waitForRequest((r) => new URL(r.url()).pathname === `/v1/emails/${id}`, {
      timeout: 25_000,
    });
    expect(again.method()).toBe('GET');
  });

  it('links an attachment only when its address is http or https', async () => {
    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Links',
        text: 'Links',
        attachments: [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }],
      },
    });
    const id = sent.json.id as string;
    // An answer the API does not give, to show the console would not link it.
    await page.route(`**/v1/emails/${id}/attachments`, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({
          object: 'list',
          has_more: false,
          data: [
            { id: 'att_1', filename: 'evil.txt', download_url: 'javascript:alert(1)' },
            { id: 'att_2', filename: 'data.txt', download_url: 'data:text/html,<script>alert(1)</script>' },
            { id: 'att_3', filename: 'good.txt', download_url: 'https://files.example/good.txt' },
          ],
        }),
      }),
    );
    await page.goto(`${origin}/#/emails/${id}`);
    await page.getByRole('link', { name: 'good.txt' }).waitFor({ timeout: 10_000 });
    await page.getByText('evil.txt').waitFor();
    expect(await page.getByRole('link', { name: 'evil.txt' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'data.txt' }).count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"], a[href^="data:"]').count()).toBe(0);
    await page.unroute(`**/v1/emails/${id}/attachments`);
  });

  it('shows the overview with the counts of the day', async () => {
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect
      .poll(
        // The metrics' Sent card (the usage card above it has cards of its own).
        () =>
          page
            .locator('.card')
            .filter({ has: page.locator('.muted', { hasText: /^Sent$/ }) })
            .locator('.value')
            .textContent(),
        { timeout: 10_000 },
      )
      .toBe('2');
    await page.screenshot({ path: 'docs/console/overview.png', fullPage: true });
  });

  it('reschedules and cancels a scheduled email on its page, and links its attachment', async () => {
    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Later',
        text: 'Later',
        scheduled_at: 'in 2 days',
        attachments: [{ filename: 'note.txt', content: Buffer.from('hello').toString('base64') }],
      },
    });
    expect(sent.status).toBe(200);
    const id = sent.json.id as string;
    await page.goto(`${origin}/#/emails/${id}`);
    await page.getByRole('heading', { name: 'Scheduled' }).waitFor({ timeout: 10_000 });
    const link = page.getByRole('link', { name: 'note.txt' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toMatch(/^https?:\/\//);

    // Three days from now, at 10:30 in the browser's zone (the page reads the field as local time).
    const at = new Date(Date.now() + 3 * 86_400_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const local = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T10:30`;
    await page.getByLabel('New time (your time zone)').fill(local);
    await page.getByRole('button', { name: 'Reschedule' }).click();
    const expected = new Date(
      await page.evaluate<string>(`new Date(${JSON.stringify(local)}).toISOString()`),
    );
    await expect
      .poll(async () => (await api.call('GET', `/emails/${id}`)).json.scheduled_at, { timeout: 10_000 })
      .toBe(expected.toISOString());

    // Cancel asks first, in the page; Cancel there leaves the email scheduled.
    await page.getByRole('button', { name: 'Cancel email' }).click();
    const question = page.getByRole('group', { name: 'Confirm: Cancel email' });
    await question.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect((await api.call('GET', `/emails/${id}`)).json.last_event).toBe('scheduled');
    await page.getByRole('button', { name: 'Cancel email' }).click();
    await question.getByRole('button', { name: 'Cancel email' }).click();
    await expect
      .poll(async () => (await api.call('GET', `/emails/${id}`)).json.last_event, { timeout: 10_000 })
      .toBe('canceled');
    await expect
      .poll(() => page.getByRole('heading', { name: 'Scheduled' }).count(), { timeout: 10_000 })
      .toBe(0);
  });

  it('works at 375 px wide: no page wider than the screen', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of ['#/', '#/emails']) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('main h1').waitFor();
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('signs out: the key is forgotten and the sign-in form shows', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await sessionKey()).toBe('');
    await page.reload();
    await page.getByLabel('API key').waitFor();
  });
});

import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';

/**
 * Sharing an email (issue 39, item 5) in a real browser over the local service: the email page's
 * "Share" button makes a link, which opens in a browser that never signed in (no key anywhere) as a
 * read-only page whose email HTML runs no script; a link made for `10s` opens, then stops.
 */
let run: ConsoleRun;
let emailId: string;
/** A second browser context: no session, no key, nothing of the console's. */
let stranger: BrowserContext;

const HTML =
  '<p style="color:#0a0">Your receipt</p><script>parent.document.title="pwned";top.document.title="pwned"</script><img src="x" onerror="top.document.title=\'pwned\'">';

beforeAll(async () => {
  run = await startConsole();
  await run.verifiedDomain('acme.test');
  const sent = await run.api.call('POST', '/emails', {
    body: {
      from: 'Acme <hello@acme.test>',
      to: 'success@simulator.amazonses.com',
      bcc: 'archive@acme.test',
      subject: 'Shared receipt',
      html: HTML,
    },
  });
  expect(sent.status).toBe(200);
  emailId = sent.json.id;
  stranger = await (run.browser as Browser).newContext({ ignoreHTTPSErrors: true });
});
afterAll(async () => {
  await stranger?.close();
  await run?.stop();
});

/** Opens a link in the stranger's browser, noting every request's Authorization header. */
async function openAsStranger(url: string) {
  const page = await stranger.newPage();
  const authorizations: (string | undefined)[] = [];
  page.on('request', (request) => authorizations.push(request.headers().authorization));
  const response = await page.goto(url);
  return { page, status: response?.status(), authorizations };
}

describe('sharing an email', () => {
  it('makes a link from the email page, which opens read-only without a key and runs no script of the email', async () => {
    const { page, origin } = run;
    await run.signIn();
    await page.goto(`${origin}/#/emails/${emailId}`);
    await page.getByRole('heading', { name: 'Shared receipt' }).waitFor();
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const field = page.getByLabel('Share link');
    await field.waitFor({ timeout: 10_000 });
    const url = await field.inputValue();
    expect(url).toMatch(new RegExp(`^${origin}/share/[A-Za-z0-9_-]{43}$`));
    await page.screenshot({ path: 'docs/console/share.png', fullPage: true });

    const opened = await openAsStranger(url);
    expect(opened.status).toBe(200);
    expect(opened.authorizations.every((header) => header === undefined)).toBe(true);
    const shared = opened.page;
    await shared.getByRole('heading', { name: 'Shared receipt' }).waitFor();
    expect(await shared.getByText('success@simulator.amazonses.com').count()).toBe(1);
    expect(await shared.getByText('archive@acme.test').count()).toBe(0);
    // The email's HTML shows, in the sandboxed frame, and none of its scripts ran.
    const frame = shared.frameLocator('iframe[sandbox=""]');
    await frame.getByText('Your receipt').waitFor();
    expect(await shared.title()).toBe('Shared receipt');
    expect(await shared.evaluate<number>('document.scripts.length')).toBe(0);
    await shared.close();
  });

  it('opens a link made for 10s, and no more once the 10 seconds are past', async () => {
    const made = await run.api.call('POST', `/emails/${emailId}/share`, { body: { expires_in: '10s' } });
    expect(made.status).toBe(200);
    const until = Date.now() + 10_000;
    const opened = await openAsStranger(made.json.url);
    expect(opened.status).toBe(200);
    await opened.page.getByRole('heading', { name: 'Shared receipt' }).waitFor();
    // Reloaded until the link stops (it must by its expiry, and not before).
    let status = opened.status;
    await expect
      .poll(
        async () => {
          status = (await opened.page.reload())?.status();
          return status;
        },
        { timeout: 20_000, interval: 1000 },
      )
      .toBe(404);
    expect(Date.now()).toBeGreaterThanOrEqual(until - 1000);
    await opened.page.getByRole('heading', { name: 'Link not found' }).waitFor();
    // An altered token finds nothing either.
    const altered = made.json.url.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect((await openAsStranger(altered)).status).toBe(404);
  });
});

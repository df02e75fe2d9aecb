import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../local/service.js';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';

/**
 * The Domains and API keys pages in a real browser (headless Chromium) over the local service: add a
 * domain, copy its DNS records, verify it, change its settings, delete it; create a key, use its
 * token against the API, rename it, revoke it; a sending-access key told what it may not see; both
 * pages at 375 px. Screenshots: docs/console/domains.png, docs/console/api-keys.png.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let context: BrowserContext;
let page: Page;
let origin: string;
let domainId: string;
let sendingToken: string;

let run: ConsoleRun;
beforeAll(async () => {
  // The scheduled check stays out of the way: only the page's reads and "Verify" ask SES.
  run = await startConsole({ domainVerifyMs: 2000, domainCheckIntervalMs: 600_000, domainFailMs: undefined });
  ({ service, api, context, page, origin } = run);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
});
afterAll(async () => {
  await run?.stop();
});

const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
const scrollWidth = () => page.evaluate<number>('document.documentElement.scrollWidth');

const signIn = (key: string) => run.signIn(key);

describe('the Domains page', () => {
  it('says how to add a first domain, with the curl line', async () => {
    await signIn(service.apiKey);
    await page.getByRole('link', { name: 'Domains', exact: true }).click();
    await page.getByRole('heading', { name: 'Domains' }).waitFor();
    await page.getByText('No domain yet.').waitFor();
    expect(await page.locator('.empty pre').textContent()).toBe(
      `curl -X POST "$API/domains" -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' -d '{"domain":"example.com"}'`,
    );
  });

  it('adds a domain and shows its DNS records, each value with a copy button that copies it', async () => {
    await page.getByLabel('Domain', { exact: true }).fill('shop.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: 'shop.test' }).waitFor({ timeout: 10_000 });
    domainId = decodeURIComponent(page.url().split('#/domains/')[1] ?? '');
    expect(domainId).toMatch(/^dom_/);
    const domain = (await api.call('GET', `/domains/${domainId}`)).json;
    const dkim = domain.records.filter((r: { record: string }) => r.record === 'DKIM');
    const spf = domain.records.filter((r: { record: string }) => r.record === 'SPF');
    expect(dkim).toHaveLength(3);
    expect(spf).toHaveLength(2);

    const table = page.locator('section', { has: page.getByRole('heading', { name: 'DNS records' }) });
    expect(await table.getByRole('row').count()).toBe(1 + 5 + 1); // header, five records, the DMARC suggestion
    for (const [label, record] of [
      ['DKIM record 1', dkim[0]],
      ['DKIM record 3', dkim[2]],
      ['SPF record 1', spf[0]],
    ] as const) {
      const copy = page.getByRole('button', { name: `Copy value of ${label}`, exact: true });
      await copy.click();
      // Said in the live region beside the button (its name stays "Copy value of …").
      const said = copy.locator('xpath=following-sibling::*[@role="status"][1]');
      await expect.poll(() => said.textContent()).toBe('Copied');
      expect(await clipboard()).toBe(record.value);
    }
    // A refused clipboard is said, with what to do instead.
    await page.evaluate(
      "Object.defineProperty(navigator.clipboard, 'writeText', { configurable: true, value: () => Promise.reject(new Error('denied')) })",
    );
    const refused = page.getByRole('button', { name: 'Copy value of SPF record 1', exact: true });
    await refused.click();
    await expect
      .poll(() => refused.locator('xpath=following-sibling::*[@role="status"][1]').textContent())
      .toBe('Copy failed: select the value and copy it');
    await page.evaluate('delete navigator.clipboard.writeText');
    await page.getByRole('button', { name: 'Copy name of DKIM record 2', exact: true }).click();
    expect(await clipboard()).toBe(dkim[1].name);
    // The MX record's priority is in its row.
    const mx = table.getByRole('row').filter({ hasText: spf[0].value });
    await mx.getByRole('cell', { name: '10', exact: true }).waitFor();
  });

  it('verifies the domain with "Verify" and shows verified', async () => {
    const status = page.locator('#domain-status');
    // SES (the local stand-in) verifies the domain 2 s after it was added; "Verify" asks it now.
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Verify', exact: true }).click();
          await page.getByRole('button', { name: 'Verify', exact: true }).isEnabled();
          return status.textContent();
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe('verified');
    // What "Verify" read is stored: the list (the stored status) says so too.
    const listed = (await api.call('GET', '/domains')).json.data[0];
    expect(listed.status).toBe('verified');
    // The copy buttons say "Copy" again after a moment.
    await expect.poll(() => page.getByText('Copied', { exact: true }).count()).toBe(0);
    await page.screenshot({ path: 'docs/console/domains.png', fullPage: true });
  });

  it('saves click tracking with PATCH, and shows the API refusing a tracking subdomain in words', async () => {
    await page.getByLabel('Click tracking').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await api.call('GET', `/domains/${domainId}`)).json;
    expect(saved.click_tracking).toBe(true);
    expect(saved.open_tracking).toBe(false);
    expect(saved.tls).toBe('opportunistic');

    // The API refuses the MAIL FROM subdomain's label (a CNAME cannot sit beside its MX): the page says why.
    await page.getByLabel('Tracking subdomain').fill('send');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 })
      .toContain('"send" is the domain\'s MAIL FROM subdomain');
    expect((await api.call('GET', `/domains/${domainId}`)).json.tracking_subdomain).toBeUndefined();
  });
});

describe('the API keys page', () => {
  it('creates a full-access key, shows its token once, and the token works', async () => {
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('deploy bot');
    await page.getByLabel('Permission').selectOption('full_access');
    // The domain choice is only for sending access.
    expect(await page.getByLabel('Domain', { exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Create API key' }).click();
    const field = page.getByLabel('Token', { exact: true });
    await field.waitFor();
    const token = await field.inputValue();
    expect(token).toMatch(/^esk_/);
    await page.getByText('it will not be shown again').waitFor();
    await page.getByRole('button', { name: 'Copy token', exact: true }).click();
    expect(await clipboard()).toBe(token);
    await page.getByRole('row').filter({ hasText: 'deploy bot' }).getByText('full_access').waitFor();
    await page.screenshot({ path: 'docs/console/api-keys.png', fullPage: true });

    expect((await api.call('GET', '/domains', { key: token })).status).toBe(200);

    // Shown once: gone after "Done", and not on the page when it is opened again.
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel('Token', { exact: true }).count()).toBe(0);
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'deploy bot' }).waitFor();
    expect(await page.locator('body').textContent()).not.toContain(token);

    // Rename it (the form submits with Enter).
    await page.getByRole('button', { name: 'Rename deploy bot' }).click();
    await page.getByLabel('New name for deploy bot').fill('deploy bot (old)');
    await page.getByLabel('New name for deploy bot').press('Enter');
    await page.getByRole('button', { name: 'Rename deploy bot (old)' }).waitFor();
    const keys = (await api.call('GET', '/api-keys')).json.data as { name: string }[];
    expect(keys.map((k) => k.name)).toContain('deploy bot (old)');

    // Revoke it, after confirming in the page; the API refuses it from then on.
    await page.getByRole('button', { name: 'Revoke deploy bot (old)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke deploy bot (old)?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await dialog.count()).toBe(0);
    expect((await api.call('GET', '/domains', { key: token })).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke deploy bot (old)' }).click();
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'deploy bot (old)' }).count()).toBe(0);
    expect((await api.call('GET', '/domains', { key: token })).status).toBe(401);
  });

  it('creates a sending-access key restricted to a domain', async () => {
    await page.getByLabel('Name', { exact: true }).fill('shop sender');
    await page.getByLabel('Permission').selectOption('sending_access');
    await page.getByLabel('Domain', { exact: true }).selectOption({ label: 'shop.test' });
    await page.getByRole('button', { name: 'Create API key' }).click();
    sendingToken = await page.getByLabel('Token', { exact: true }).inputValue();
    expect(sendingToken).toMatch(/^esk_/);
    const row = page.getByRole('row').filter({ hasText: 'shop sender' });
    await row.getByText('sending_access').waitFor();
    await row.getByRole('link', { name: 'shop.test' }).waitFor();
    const keys = (await api.call('GET', '/api-keys')).json.data as { name: string; domain_id: string }[];
    expect(keys.find((k) => k.name === 'shop sender')?.domain_id).toBe(domainId);
  });
});

describe('both pages', () => {
  it('work at 375 px wide: nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of ['#/domains', `#/domains/${domainId}`, '#/api-keys']) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('main h1').waitFor();
      await page.locator('main table').first().waitFor();
      expect(await scrollWidth(), hash).toBeLessThanOrEqual(375);
    }
    // With the confirmation open too.
    await page.getByRole('button', { name: 'Revoke shop sender' }).click();
    await page.getByRole('dialog').waitFor();
    expect(await scrollWidth()).toBeLessThanOrEqual(375);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('deletes the domain after confirming in the page', async () => {
    await page.goto(`${origin}/#/domains/${domainId}`);
    await page.getByRole('heading', { name: 'shop.test' }).waitFor();
    await page.getByRole('button', { name: 'Delete domain' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete shop.test?' });
    // Cancel has the focus (a stray Enter destroys nothing), and Escape cancels.
    await dialog.waitFor();
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Cancel');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    expect((await api.call('GET', `/domains/${domainId}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete domain' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { name: 'Domains' }).waitFor();
    await page.getByText('No domain yet.').waitFor();
    expect((await api.call('GET', `/domains/${domainId}`)).status).toBe(404);
  });

  it('says of a failed domain to delete it and add it again, as the API guide does, not to press Verify', async () => {
    // The local SES fails a domain under .invalid: its records never appear, as after SES's 72 hours.
    const added = await api.call('POST', '/domains', { body: { domain: 'gone.invalid' } });
    expect(added.status).toBe(201);
    await expect
      .poll(async () => (await api.call('GET', `/domains/${added.json.id}`)).json?.status, {
        timeout: 30_000,
      })
      .toBe('failed');
    await page.goto(`${origin}/#/domains/${added.json.id}`);
    await page.getByRole('heading', { name: 'gone.invalid' }).waitFor();
    const actions = page.locator('.actions', {
      has: page.getByRole('button', { name: 'Verify', exact: true }),
    });
    await expect.poll(() => actions.textContent()).toContain('Delete the domain and add it again');
    expect(await actions.textContent()).not.toContain('press Verify');
    expect((await api.call('DELETE', `/domains/${added.json.id}`)).status).toBe(200);
  }, 60_000);

  it('tells a sending-access key, in words, what it may not see, and shows it no form it cannot use', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(sendingToken);
    for (const [link, what] of [
      ['Domains', 'the domains'],
      ['API keys', 'the API keys'],
      ['Webhooks', 'the webhooks'],
      ['Suppressions', 'the suppression list'],
      ['Logs', 'the request logs'],
      ['Emails', 'the emails'],
    ] as const) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: link }).waitFor();
      await expect
        .poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 })
        .toContain(`This key has sending access only: sign in with a full-access key to see ${what}.`);
      // No Add domain, Create API key, Add webhook, Add address, status filter, Newer or Older.
      expect(await page.locator('main form, main select').count(), link).toBe(0);
      expect(await page.getByRole('button', { name: /^(Newer|Older)$/ }).count(), link).toBe(0);
    }
  });

  it('asks no more after a refusal that will not change: Emails polls no 403 again and again', async () => {
    // Signed in with the sending-access key, on Emails (the test before): the list is refreshed every
    // 3 s while open, but not after a 403.
    const asked: string[] = [];
    const count = (request: { url(): string }) => {
      if (new URL(request.url()).pathname === '/v1/emails') asked.push(request.url());
    };
    page.on('request', count);
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('link', { name: 'Emails', exact: true }).click();
    await page.getByRole('alert').first().waitFor({ timeout: 10_000 });
    const started = Date.now();
    // Waiting is the test: three refresh periods and some.
    await expect.poll(() => Date.now() - started, { timeout: 15_000, interval: 500 }).toBeGreaterThan(8000);
    page.off('request', count);
    expect(asked.length).toBeGreaterThanOrEqual(1);
    expect(asked.length).toBeLessThanOrEqual(2);
  });
});

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../local/service.js';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';

/**
 * Usage on the Overview and the Logs page's search, in headless Chromium over the local service:
 * the usage card shows SES's 24-hour quota as the local send consumer stored it and warns when it
 * is nearly spent or sending is paused; the Logs page filters by method, path and key, keeps the
 * filters in its URL (a reload or a pasted link shows the same search) and names each key.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let page: Page;
let origin: string;
let run: ConsoleRun;
let ciKey: { id: string; token: string };

beforeAll(async () => {
  run = await startConsole();
  ({ service, api, page, origin } = run);
  await run.verifiedDomain('acme.test');
  const sent = await api.call('POST', '/emails', {
    body: { from: 'hello@acme.test', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' },
  });
  expect(sent.status).toBe(200);
  const made = await api.call('POST', '/api-keys', { body: { name: 'ci deploy' } });
  ciKey = { id: made.json.id, token: made.json.token };
  expect((await api.call('GET', '/domains', { key: ciKey.token })).status).toBe(200);
  await service.idle();
  await run.signIn();
});
afterAll(async () => {
  await run?.stop();
});

describe('usage on the Overview', () => {
  it('shows the 24-hour quota SES gave, as stored by the send consumer, and this month’s emails', async () => {
    const usage = page.getByRole('region', { name: 'Usage' });
    await expect
      .poll(
        async () => {
          await page.reload();
          await usage.getByText('Last 24 hours (SES quota)').waitFor();
          return usage.textContent();
        },
        { timeout: 20_000 },
      )
      .toMatch(/SES read/);
    expect(await usage.textContent()).toMatch(/1 sent/);
    expect(await usage.getByRole('alert').count()).toBe(0);
    await page.screenshot({ path: 'docs/console/overview-usage.png', fullPage: false });
  });

  it('warns when the quota is nearly spent and when SES has paused sending', async () => {
    const real = (await api.call('GET', '/usage')).json;
    await page.route(/\/v1\/usage$/, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({
          ...real,
          emails: { ...real.emails, daily: { ...real.emails.daily, used: 190, limit: 200 } },
          sending: { ...real.sending, paused: true },
        }),
      }),
    );
    try {
      await page.reload();
      const usage = page.getByRole('region', { name: 'Usage' });
      await usage.getByRole('alert').filter({ hasText: 'Sending is paused' }).waitFor();
      await usage.getByRole('alert').filter({ hasText: 'nearly spent' }).waitFor();
      expect(await usage.textContent()).toContain('190 / 200');
    } finally {
      await page.unroute(/\/v1\/usage$/);
    }
  });
});

describe('the Logs page’s search', () => {
  const rows = () => page.locator('tbody tr');

  it('filters by key and method from its URL, names the key, and keeps the search on reload', async () => {
    await page.goto(`${origin}/#/logs?method=GET&api_key_id=${encodeURIComponent(ciKey.id)}`);
    await page.getByRole('heading', { name: 'Logs', exact: true }).waitFor();
    const row = rows().filter({ hasText: '/v1/domains' }).first();
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return row.count();
        },
        // A click a second and a half: the console paces its requests to 5 a second, so clicks
        // every 50 ms (the poll's default) queue loads faster than they are sent, and the newest,
        // the one shown, is always at the back.
        { timeout: 20_000, interval: 1_500 },
      )
      .toBeGreaterThan(0);
    expect(await row.textContent()).toContain('ci deploy');
    // Only that key's GETs: none of the main key's requests (the send, the key's creation).
    const texts = await rows().allTextContents();
    expect(texts.every((t) => t.startsWith('GET') && t.includes('ci deploy'))).toBe(true);
    await page.reload();
    await page.getByRole('heading', { name: 'Logs', exact: true }).waitFor();
    expect(await page.getByLabel('Method').inputValue()).toBe('GET');
    expect(await page.getByLabel('Key').inputValue()).toBe(ciKey.id);
    await rows().filter({ hasText: 'ci deploy' }).first().waitFor();
  });

  it('searches by path with the field, writing it into the URL', async () => {
    await page.goto(`${origin}/#/logs`);
    await page.getByLabel('Path starts with').fill('/v1/emails');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/path=%2Fv1%2Femails/);
    await rows().filter({ hasText: 'POST' }).filter({ hasText: '/v1/emails' }).first().waitFor();
    const endpoints = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(endpoints.length).toBeGreaterThan(0);
    expect(endpoints.every((e) => e.startsWith('/v1/emails'))).toBe(true);
    await page.screenshot({ path: 'docs/console/logs-search.png', fullPage: false });
  });
});

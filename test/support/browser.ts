import { existsSync, mkdirSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { type LocalServiceOptions, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from './https.js';

/** Debian's Chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * What every browser test starts with: the local service (its timings short), headless Chromium
 * trusting the service's self-signed certificate, a desktop-sized page, and the screenshot folder.
 * Fails, not skips, when Chromium is missing: a missing browser must not pass for a tested console.
 */
export async function startConsole(options: Partial<LocalServiceOptions> = {}) {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  const service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 500,
    domainFailMs: 1500,
    domainCheckIntervalMs: 100,
    rateLimitPerSecond: 1000,
    ...options,
  });
  const origin = service.baseUrl.replace(/\/v1$/, '');
  const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const context: BrowserContext = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 800 },
  });
  const page: Page = await context.newPage();
  mkdirSync('docs/console', { recursive: true });
  return {
    service,
    api,
    browser,
    context,
    page,
    origin,
    /** Signs in through the form and waits for the overview. */
    async signIn(key = service.apiKey) {
      await page.goto(`${origin}/`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: 10_000 });
    },
    /** Adds a sending domain through the API and waits until the local SES verified it. */
    async verifiedDomain(name: string) {
      expect((await api.call('POST', '/domains', { body: { domain: name } })).status).toBe(201);
      const verified = await waitFor(
        () => api.call('GET', '/domains'),
        (r) =>
          r.json?.data?.some(
            (d: { domain: string; status: string }) => d.domain === name && d.status === 'verified',
          ),
      );
      expect(
        verified.json.data.some(
          (d: { domain: string; status: string }) => d.domain === name && d.status === 'verified',
        ),
      ).toBe(true);
    },
    async stop() {
      await browser.close();
      await api.close();
      await service.stop();
    },
  };
}

export type ConsoleRun = Awaited<ReturnType<typeof startConsole>>;

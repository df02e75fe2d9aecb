import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';

/**
 * The Emails page's search in headless Chromium over the local service: three emails, two of them
 * to one customer (once in To, once in Bcc, in another case); the field labelled "Search" finds
 * exactly those two, the search is in the URL, a reload keeps it and its results, and the status
 * filter narrows it, kept in the URL too.
 */
let api: ReturnType<typeof httpsClient>;
let page: Page;
let run: ConsoleRun;
const subjects = ['Order shipped', 'Invoice ready', 'Newsletter'];

beforeAll(async () => {
  run = await startConsole();
  ({ api, page } = run);
  await run.verifiedDomain('acme.test');
  await run.signIn();
  const bodies = [
    { to: 'Customer@Example.test', subject: subjects[0] },
    { to: 'someone@example.test', bcc: 'customer@example.test', subject: subjects[1] },
    { to: 'someone@example.test', subject: subjects[2] },
  ];
  for (const body of bodies) {
    const sent = await api.call('POST', '/emails', {
      body: { from: 'Acme <hello@acme.test>', text: 'Hello', ...body },
    });
    expect(sent.status).toBe(200);
  }
});
afterAll(() => run?.stop());

/** The subjects the list shows, in order. */
const listed = () => page.locator('table tbody tr a').allTextContents();

describe('searching emails in the console', () => {
  it('finds a customer’s emails by recipient from the field labelled "Search", and keeps the search in the URL', async () => {
    await page.getByRole('link', { name: 'Emails', exact: true }).click();
    await page.getByRole('heading', { name: 'Emails', exact: true }).waitFor();
    await expect.poll(listed, { timeout: 15_000 }).toEqual([...subjects].reverse());

    await page.getByLabel('Search', { exact: true }).fill('CUSTOMER@example.test');
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await page.waitForURL(/#\/emails\?recipient=CUSTOMER%40example\.test$/);
    await expect.poll(listed, { timeout: 15_000 }).toEqual([subjects[1], subjects[0]]);

    // A reload (or the link shared) opens the same search, its field filled in.
    await page.reload();
    await page.getByRole('heading', { name: 'Emails', exact: true }).waitFor();
    await expect.poll(listed, { timeout: 15_000 }).toEqual([subjects[1], subjects[0]]);
    expect(await page.getByLabel('Search', { exact: true }).inputValue()).toBe('CUSTOMER@example.test');
  });

  it('narrows by status, in the URL beside the recipient, and says when nothing matches', async () => {
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.waitForURL(/#\/emails\?recipient=CUSTOMER%40example\.test&status=failed$/);
    await page.getByText('No failed email to customer@example.test.').waitFor();
    await page.reload();
    await page.getByText('No failed email to customer@example.test.').waitFor();
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('failed');

    // Cleared, the list is whole again, and so is the URL.
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await page.waitForURL(/#\/emails$/);
    await expect.poll(listed, { timeout: 15_000 }).toEqual([...subjects].reverse());
  });
});

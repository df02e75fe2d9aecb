import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import { type httpsClient, waitFor } from '../support/https.js';

/**
 * The Templates page and the overview's charts in headless Chromium over the local service: a
 * template made through the page with its variables, previewed live with sample values in the
 * sandboxed frame (escaped as a send escapes them), saved, published, sent by alias through the API
 * (the email's page links back to it), edited, duplicated and deleted; then the overview's SVG
 * charts of that email, by day and by hour (kept in the URL), and by sender domain. Takes
 * docs/console/templates.png and docs/console/charts.png.
 */
let run: ConsoleRun;
let api: ReturnType<typeof httpsClient>;
let page: Page;
let origin: string;
let templateId: string;

beforeAll(async () => {
  run = await startConsole();
  ({ api, page, origin } = run);
  await run.verifiedDomain('acme.test');
  await run.signIn();
});
afterAll(async () => {
  await run?.stop();
});

const preview = () => page.frameLocator('iframe.preview');
const idInUrl = () => decodeURIComponent(page.url().split('#/templates/')[1] ?? '');

describe('the Templates page', () => {
  it('is in the navigation, and says how to start when there is none', async () => {
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('heading', { name: 'Templates', exact: true }).waitFor();
    await page.getByText('No template yet.').waitFor();
  });

  it('creates a template whose variables are declared from its parts and previewed with sample values', async () => {
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'New template' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Welcome');
    await page.getByLabel('Alias', { exact: true }).fill('welcome');
    await page.getByLabel('Subject', { exact: true }).fill('Hi {{{NAME}}}');
    await page.getByLabel('HTML', { exact: true }).fill('<p>Hello {{{NAME}}}, you are on {{{PLAN}}}.</p>');
    // Undeclared names are said in the renderer's words, and the template cannot be created yet.
    await page.getByText('The HTML uses {{{NAME}}}, which is not declared', { exact: false }).waitFor();
    expect(await page.getByRole('button', { name: 'Create template' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Declare NAME, PLAN' }).click();
    await page.getByRole('group', { name: 'Variable PLAN' }).waitFor();
    // No value for PLAN yet: the preview says what it needs.
    await page.getByText('PLAN has no value', { exact: false }).waitFor();
    await page.locator('#variable-1-fallback').fill('free');
    // A sample with markup is written as text, as a send escapes a value in the HTML.
    await page.locator('#variable-0-sample').fill('<b>Ada</b>');
    await preview().getByText('Hello <b>Ada</b>, you are on free.').waitFor({ timeout: 30_000 });
    expect(await preview().locator('b').count()).toBe(0);
    expect(await page.getByTestId('preview-subject').textContent()).toBe('Hi <b>Ada</b>');
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).toBe('');
    // Live: a new sample shows without saving.
    await page.locator('#variable-1-sample').fill('pro');
    await preview().getByText('you are on pro.', { exact: false }).waitFor({ timeout: 30_000 });

    await page.getByRole('button', { name: 'Create template' }).click();
    await page.waitForURL(/#\/templates\/tpl_/, { timeout: 30_000 });
    templateId = idInUrl();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    const stored = await api.call('GET', `/templates/${templateId}`);
    expect(stored.json).toMatchObject({
      name: 'Welcome',
      alias: 'welcome',
      subject: 'Hi {{{NAME}}}',
      status: 'draft',
      variables: [
        { key: 'NAME', type: 'string' },
        { key: 'PLAN', type: 'string', fallback_value: 'free' },
      ],
    });
    expect(stored.json.variables[0]).not.toHaveProperty('fallback_value');
    // The samples stay with the page of the template just made.
    await preview().getByText('Hello <b>Ada</b>, you are on pro.').waitFor({ timeout: 30_000 });
    await page.getByText('Saved: publish it for sends to use it.').waitFor();
  });

  it('publishes it; an email sent with it links to it from its page', async () => {
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Saved and published.').waitFor({ timeout: 30_000 });
    expect((await api.call('GET', `/templates/${templateId}`)).json.status).toBe('published');
    await preview().getByText('you are on pro.', { exact: false }).waitFor({ timeout: 30_000 });
    await page.evaluate('scrollTo(0, 0)');
    await page.screenshot({ path: 'docs/console/templates.png', fullPage: true });

    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        template: { id: 'welcome', variables: { NAME: 'Grace' } },
      },
    });
    expect(sent.status).toBe(200);
    await page.goto(`${origin}/#/emails/${sent.json.id}`);
    await page.getByRole('heading', { name: 'Hi Grace' }).waitFor({ timeout: 30_000 });
    await page.getByRole('link', { name: templateId }).click();
    await page.waitForURL(new RegExp(`#/templates/${templateId}$`));
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
  });

  it('saves an edit as a new version that sends do not use until it is published', async () => {
    await page.getByLabel('HTML', { exact: true }).fill('<p>Welcome, {{{NAME}}} ({{{PLAN}}}).</p>');
    await page.getByText('Changes not saved.').waitFor();
    expect(await page.getByRole('button', { name: 'Publish' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('with changes not published yet', { exact: false }).waitFor({ timeout: 30_000 });
    const stored = (await api.call('GET', `/templates/${templateId}`)).json;
    expect(stored).toMatchObject({
      html: '<p>Welcome, {{{NAME}}} ({{{PLAN}}}).</p>',
      has_unpublished_versions: true,
    });
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Saved and published.').waitFor({ timeout: 30_000 });
    expect((await api.call('GET', `/templates/${templateId}`)).json.has_unpublished_versions).toBe(false);
  });

  it('duplicates it into a new draft, and deletes that one after asking', async () => {
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { name: 'Welcome (copy)' }).waitFor({ timeout: 30_000 });
    const copyId = idInUrl();
    expect(copyId).toMatch(/^tpl_/);
    expect(copyId).not.toBe(templateId);
    expect((await api.call('GET', `/templates/${copyId}`)).json).toMatchObject({ status: 'draft' });

    await page.getByRole('button', { name: 'Delete template' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(/#\/templates$/, { timeout: 30_000 });
    await page.getByRole('link', { name: 'Welcome', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Welcome (copy)' }).count()).toBe(0);
    expect((await api.call('GET', `/templates/${copyId}`)).status).toBe(404);
  });
});

describe("the overview's charts", () => {
  it('draws sent, delivered, bounced, opened and clicked by day and by hour, and by sender domain', async () => {
    // The email sent above, counted.
    await waitFor(
      () => api.call('GET', '/emails/metrics?metrics=sent,delivered'),
      (r) => r.json?.totals?.sent >= 1 && r.json?.totals?.delivered >= 1,
    );
    await page.goto(`${origin}/#/`);
    const overTime = page.locator('svg[data-chart="chart-time"]');
    await overTime.waitFor({ timeout: 30_000 });
    expect(await overTime.getAttribute('role')).toBe('img');
    expect(await page.locator('#chart-time-title').textContent()).toContain('by day');
    // The scale's labels: whole counts only (1 at the top, 0 at the bottom).
    expect(await overTime.locator('.chart-grid text').allTextContents()).toEqual(['0', '1']);
    expect(await page.locator('#chart-time-desc').textContent()).toMatch(
      /Over the last 7 days: 1 sent, 1 delivered/,
    );
    // One line per metric, over the 7 days.
    const lines = overTime.locator('polyline');
    expect(await lines.evaluateAll((all) => all.map((l) => l.getAttribute('data-series')))).toEqual([
      'Sent',
      'Delivered',
      'Bounced',
      'Opened',
      'Clicked',
    ]);
    expect((await lines.first().getAttribute('points'))?.trim().split(' ').length).toBe(7);
    const domains = page.locator('svg[data-chart="chart-domains"]');
    await domains.locator('g[data-group="acme.test"]').waitFor();
    expect(await page.locator('#chart-domains-desc').textContent()).toContain(
      'acme.test: 1 sent, 1 delivered',
    );

    await page.locator('section.overview-charts').screenshot({ path: 'docs/console/charts.png' });
    await page.getByLabel('Points').selectOption('hourly');
    await page.waitForURL(/#\/\?by=hourly$/);
    await expect.poll(() => page.locator('#chart-time-title').textContent()).toContain('by hour');
    // Kept in the URL: a reload draws it by hour again.
    await page.reload();
    await expect
      .poll(() => page.locator('#chart-time-title').textContent(), { timeout: 30_000 })
      .toContain('by hour');
    expect(await page.getByLabel('Points').inputValue()).toBe('hourly');
    const points =
      (await overTime.locator('polyline').first().getAttribute('points'))?.trim().split(' ') ?? [];
    expect(points.length).toBeGreaterThan(24 * 6);
  });
});

describe('at 375 px', () => {
  it('no templates page or overview is wider than the screen', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of ['#/templates', `#/templates/${templateId}`, '#/templates/new', '#/']) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('main h1').waitFor();
      if (hash === '#/') await page.locator('svg[data-chart="chart-time"]').waitFor({ timeout: 30_000 });
      else if (hash !== '#/templates') await page.locator('form.template-form').waitFor({ timeout: 30_000 });
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), hash).toBeLessThanOrEqual(
        375,
      );
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLogsAreOff } from '../../functions/request-logs/model.js';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../functions/webhooks/model.js';
import type { LocalService } from '../../local/service.js';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The Webhooks, Suppressions and Logs pages in headless Chromium over the local service: a webhook
 * added through the page receives an email's events at a receiver on this machine (the local
 * service delivers to loopback receivers, as `npm start` does), its attempts show on its page and a
 * replay reaches the receiver again under the same message id; its secret is revealed, rotated,
 * and equals the API's; an address is suppressed and removed; the request log lists the requests
 * just made, with their bodies redacted. Screenshots go to docs/console/.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let page: Page;
let origin: string;
let webhookId: string;
let logId: string;

let run: ConsoleRun;
beforeAll(async () => {
  run = await startConsole();
  ({ service, api, page, origin } = run);
  receiver = await startReceiver();
  await run.verifiedDomain('acme.test');
  await run.signIn();
});
afterAll(async () => {
  await receiver?.close();
  await run?.stop();
});

/** The receiver's requests for one event type, with their message ids. */
const receivedOf = (type: string) =>
  receiver.received
    .filter((r) => JSON.parse(r.body).type === type)
    .map((r) => ({ id: r.headers['webhook-id'], status: r.status }));

describe('the Webhooks page', () => {
  it('starts empty, saying how to add one, and offers every event type the API takes', async () => {
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
    await page.getByText('No webhook yet.').waitFor();
    await page.getByText('curl', { exact: false }).first().waitFor();
    // One checkbox per subscribable type, the never-sent ones folded away.
    await page.getByText('Types Resend takes that this service never sends').click();
    const labels = await page
      .locator('fieldset input[type=checkbox]')
      .evaluateAll((boxes) =>
        boxes.map((box) =>
          (box as unknown as { parentElement: { textContent: string } }).parentElement.textContent.trim(),
        ),
      );
    expect([...labels].sort()).toEqual([...SUBSCRIBABLE_EVENT_TYPES].sort());
  });

  it('refuses an endpoint the API refuses, in words', async () => {
    await page.getByLabel('Endpoint URL').fill('https://10.0.0.1/hooks');
    await page.getByRole('checkbox', { name: 'email.delivered' }).check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 })
      .toContain('Correct what the message names');
    expect(page.url()).toMatch(/#\/webhooks$/);
  });

  it('adds a webhook for a local receiver, which gets an email’s events; its page shows the attempts', async () => {
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByRole('checkbox', { name: 'email.sent' }).check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.waitForURL(/#\/webhooks\/wh_/);
    webhookId = decodeURIComponent(page.url().split('#/webhooks/')[1] ?? '');
    await page.getByRole('heading', { name: receiver.url }).waitFor();
    const stored = await api.call('GET', `/webhooks/${webhookId}`);
    expect(stored.json).toMatchObject({
      endpoint: receiver.url,
      events: ['email.delivered', 'email.sent'],
      status: 'enabled',
    });

    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Webhook check',
        text: 'Hello',
      },
    });
    expect(sent.status).toBe(200);
    await expect.poll(() => receivedOf('email.delivered').length, { timeout: 20_000 }).toBe(1);

    // The page (refreshed while open) lists the message, its status and its attempt's 200.
    const delivered = page.locator('li.message').filter({ hasText: 'email.delivered' });
    await delivered.getByText('success').waitFor({ timeout: 15_000 });
    await delivered.getByRole('cell', { name: '200', exact: true }).waitFor();
    await page.locator('li.message').filter({ hasText: 'email.sent' }).first().waitFor();
    expect(await delivered.getByRole('row').count()).toBe(2); // the head row and one attempt
  });

  it('replays a message: a second attempt reaches the receiver with the same message id', async () => {
    const delivered = page.locator('li.message').filter({ hasText: 'email.delivered' });
    await delivered.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => receivedOf('email.delivered').length, { timeout: 20_000 }).toBe(2);
    const [first, second] = receivedOf('email.delivered');
    expect(second?.id).toBe(first?.id);
    expect(await delivered.getAttribute('data-message-id')).toBe(first?.id);
    // Both attempts on the page.
    await expect.poll(() => delivered.getByRole('row').count(), { timeout: 15_000 }).toBe(3);
    await delivered.getByText('2 attempts').waitFor();
  });

  it('reveals the signing secret on demand, the API’s own, and rotates it after confirmation', async () => {
    expect(await page.getByTestId('signing-secret').count()).toBe(0);
    await page.getByRole('button', { name: 'Reveal signing secret' }).click();
    const before = (await api.call('GET', `/webhooks/${webhookId}`)).json.signing_secret as string;
    expect(before).toMatch(/^whsec_/);
    expect(await page.getByTestId('signing-secret').textContent()).toBe(before);
    await page.getByRole('button', { name: 'Copy signing secret' }).waitFor();
    await page.screenshot({ path: 'docs/console/webhooks.png', fullPage: true });

    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await page.getByText('The old one keeps signing beside it for 24 hours').first().waitFor();
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'A new secret is in use' }).waitFor();
    const after = (await api.call('GET', `/webhooks/${webhookId}`)).json.signing_secret as string;
    expect(after).not.toBe(before);
    await expect
      .poll(() => page.getByTestId('signing-secret').textContent(), { timeout: 10_000 })
      .toBe(after);
  });

  it('disables and enables the endpoint', async () => {
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page.getByRole('button', { name: 'Enable', exact: true }).waitFor();
    expect((await api.call('GET', `/webhooks/${webhookId}`)).json.status).toBe('disabled');
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('button', { name: 'Disable', exact: true }).waitFor();
    expect((await api.call('GET', `/webhooks/${webhookId}`)).json.status).toBe('enabled');
  });

  it('lists it, and deletes another one only after confirmation', async () => {
    const other = await api.call('POST', '/webhooks', {
      body: { endpoint: `${receiver.url}/other`, events: ['domain.created'] },
    });
    expect(other.status).toBe(201);
    await page.getByRole('link', { name: '← Webhooks' }).click();
    await page.getByRole('link', { name: receiver.url, exact: true }).waitFor();
    await page.getByRole('link', { name: `${receiver.url}/other` }).click();
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    // Nothing is deleted before the second press.
    expect((await api.call('GET', `/webhooks/${other.json.id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(/#\/webhooks$/);
    expect((await api.call('GET', `/webhooks/${other.json.id}`)).status).toBe(404);
    await page.getByRole('link', { name: receiver.url, exact: true }).waitFor();
  });

  it('shows an endpoint its circuit breaker paused, and since when it fails; its status stays enabled', async () => {
    const failing = await startReceiver();
    failing.setDown(500);
    try {
      const created = await api.call('POST', '/webhooks', {
        body: { endpoint: failing.url, events: ['email.sent', 'email.delivered'] },
      });
      expect(created.status).toBe(201);
      // Three emails, six events: five failures in a row pause it.
      for (let i = 0; i < 3; i++)
        expect(
          (
            await api.call('POST', '/emails', {
              body: {
                from: 'hello@acme.test',
                to: 'success@simulator.amazonses.com',
                subject: 'Paused',
                text: 'x',
              },
            })
          ).status,
        ).toBe(200);
      await expect
        .poll(async () => (await api.call('GET', `/webhooks/${created.json.id}`)).json.paused_until, {
          timeout: 30_000,
        })
        .not.toBeNull();
      // Away and back: the list is read again.
      await page.getByRole('link', { name: 'Overview', exact: true }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
      const row = page.getByRole('row').filter({ hasText: failing.url });
      await row.getByText('paused').waitFor({ timeout: 10_000 });
      expect(await row.getByText('enabled').count()).toBe(1);
      await row.getByRole('link', { name: failing.url }).click();
      await page.getByText('Paused until').waitFor();
      await page.getByText('Failing since').waitFor();
      await page.getByText('delivered, oldest first, once a probe').waitFor();
      await page.getByRole('link', { name: '← Webhooks' }).click();
      await page.getByRole('link', { name: receiver.url, exact: true }).waitFor();
    } finally {
      await failing.close();
    }
  });
});

describe('the Suppressions page', () => {
  const address = 'someone+console@example.com';

  it('adds an address, lists it with its origin, and filters by origin', async () => {
    // One entry by a bounce, beside the one added through the page.
    await api.call('POST', '/emails', {
      body: {
        from: 'hello@acme.test',
        to: 'bounce+console@simulator.amazonses.com',
        subject: 'x',
        text: 'x',
      },
    });
    await page.getByRole('link', { name: 'Suppressions', exact: true }).click();
    await page.getByRole('heading', { name: 'Suppressions', exact: true }).waitFor();
    await page.getByLabel('Email address').fill(address);
    await page.getByRole('button', { name: 'Suppress' }).click();
    const row = page.getByRole('row').filter({ hasText: address });
    await row.getByText('manual').waitFor({ timeout: 10_000 });
    expect((await api.call('GET', `/suppressions/${encodeURIComponent(address)}`)).json.origin).toBe(
      'manual',
    );

    await expect
      .poll(async () => (await api.call('GET', '/suppressions?origin=bounce')).json.data.length, {
        timeout: 20_000,
      })
      .toBe(1);
    await page.getByLabel('Origin').selectOption('bounce');
    await page.getByRole('row').filter({ hasText: 'bounce+console@simulator.amazonses.com' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: address }).count()).toBe(0);
    await page.getByLabel('Origin').selectOption('');
    await row.waitFor();
    await page.getByRole('row').filter({ hasText: 'bounce+console@' }).waitFor();
    await page.screenshot({ path: 'docs/console/suppressions.png', fullPage: true });
  });

  it('removes an address after confirmation, and the API no longer has it', async () => {
    const row = page.getByRole('row').filter({ hasText: address });
    await row.getByRole('button', { name: 'Remove' }).click();
    await row.getByText('It will be mailed again').waitFor();
    expect((await api.call('GET', `/suppressions/${encodeURIComponent(address)}`)).status).toBe(200);
    await row.getByRole('button', { name: 'Remove', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${address} is no longer suppressed` })
      .waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: address }).count()).toBe(0);
    expect((await api.call('GET', `/suppressions/${encodeURIComponent(address)}`)).status).toBe(404);
  });
});

describe('the Logs page', () => {
  it('lists the requests just made, filtered by status class', async () => {
    // Requests just made: a webhook added (its answer holds the signing secret) and removed, a 404.
    const added = await api.call('POST', '/webhooks', {
      body: { endpoint: `${receiver.url}/logs`, events: ['domain.created'] },
    });
    expect(added.status).toBe(201);
    expect((await api.call('DELETE', `/webhooks/${added.json.id}`)).status).toBe(200);
    expect((await api.call('GET', '/emails/em_missing')).status).toBe(404);
    await service.idle();
    await page.getByRole('link', { name: 'Logs', exact: true }).click();
    await page.getByRole('heading', { name: 'Logs', exact: true }).waitFor();
    // Logs are written a moment after the request (as CloudWatch Logs' subscription delivers them).
    const webhookRow = page.getByRole('row').filter({ hasText: 'POST' }).filter({ hasText: '/v1/webhooks' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return webhookRow.filter({ hasText: '201' }).count();
        },
        // A click a second and a half: faster clicks queue loads behind the console's pace of 5 a second.
        { timeout: 20_000, interval: 1_500 },
      )
      .toBeGreaterThan(0);
    await page.getByRole('row').filter({ hasText: '/v1/suppressions' }).first().waitFor();
    await page.screenshot({ path: 'docs/console/logs.png', fullPage: true });

    await page.getByLabel('Status').selectOption('4xx');
    // Every row shown answered 4xx, the 404 just made among them.
    const statuses = () => page.locator('tbody tr td:nth-child(3)').allTextContents();
    await expect
      .poll(async () => {
        const shown = await statuses();
        return shown.length > 0 && shown.every((status) => /^4\d\d$/.test(status));
      })
      .toBe(true);
    await page.getByRole('row').filter({ hasText: '/v1/emails/em_missing' }).waitFor();
    await page.getByLabel('Status').selectOption('');
    await expect.poll(async () => (await statuses()).some((status) => status.startsWith('2'))).toBe(true);
  });

  it('opens a request with its bodies, the signing secret redacted', async () => {
    const secret = (await api.call('GET', `/webhooks/${webhookId}`)).json.signing_secret as string;
    const row = page
      .getByRole('row')
      .filter({ hasText: 'POST' })
      .filter({ hasText: '/v1/webhooks' })
      .filter({ hasText: '201' })
      .first();
    await row.getByRole('link', { name: '/v1/webhooks' }).click();
    await page.waitForURL(/#\/logs\/.+/);
    logId = decodeURIComponent(page.url().split('#/logs/')[1] ?? '');
    await page.getByRole('heading', { name: 'POST /v1/webhooks' }).waitFor();
    const request = await page.locator('pre[data-body=request]').textContent();
    const response = (await page.locator('pre[data-body=response]').textContent()) ?? '';
    expect(JSON.parse(request ?? '')).toMatchObject({ events: ['domain.created'] });
    expect(JSON.parse(response)).toMatchObject({ object: 'webhook', signing_secret: '[redacted]' });
    expect(response).toContain('\n  "'); // pretty-printed
    expect(await page.content()).not.toContain('whsec_');
    expect(secret).toMatch(/^whsec_/);
    expect(await page.content()).not.toContain(service.apiKey);
  });

  it('says so when request logs are turned off', async () => {
    // The service answers 404 with this message on a deployment with requestLogs=false.
    const off = requestLogsAreOff();
    await page.route(/\/v1\/logs\?/, (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({ statusCode: 404, name: 'not_found', message: off.message }),
      }),
    );
    try {
      await page.getByRole('link', { name: 'Overview', exact: true }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('link', { name: 'Logs', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Request logs are turned off' }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await page.getByRole('table').count()).toBe(0);
    } finally {
      await page.unroute(/\/v1\/logs\?/);
    }
  });
});

describe('the three pages at 375 px', () => {
  it('are no wider than the screen', async () => {
    // The log of a request, whatever the tests above managed.
    logId ||= (await api.call('GET', '/logs?limit=1')).json.data[0].id;
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of [
      '#/webhooks',
      `#/webhooks/${webhookId}`,
      '#/suppressions',
      '#/logs',
      `#/logs/${logId}`,
    ]) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('main h1').waitFor();
      await page
        .locator('main table, main .empty, main dl')
        .first()
        .waitFor({ timeout: 10_000 })
        .catch(() => {
          throw new Error(`${hash}: no table, empty state or fields shown`);
        });
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), hash).toBeLessThanOrEqual(
        375,
      );
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

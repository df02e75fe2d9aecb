import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';
import { waitFor } from '../support/https.js';
import { layoutProblems } from '../support/layout.js';

/**
 * The Broadcasts pages in headless Chromium over the local service (issue 41), against the
 * broadcast routes (create, get, list, update, send, cancel, duplicate, delete, preview, recipients
 * by type, clicked links): a draft composed through the page (its segment and topic chosen by
 * name, read back through the API) and edited (only the changed field sent); its preview rendered
 * by the service for a contact of the segment, in the sandboxed frame; scheduled at a time picked
 * in the browser's zone (the API gets it in UTC) and its schedule canceled (a draft again, as
 * Resend's changelog has it), with no email sent; duplicated, and the copy sent now: its progress
 * (one email per contact, the unsubscribed contact left out), its totals, its recipients by type
 * and by address, its clicked links; the list; the pages at 375 px; a sending-access key told,
 * with no form; a draft deleted after confirmation. Takes docs/console/broadcasts.png and
 * docs/console/broadcast.png.
 */
let run: ConsoleRun;
let api: ReturnType<typeof httpsClient>;
let page: Page;
let origin: string;
const ids: Record<string, string> = {};

const CONTACTS = [
  { email: 'ada@example.test', first_name: 'Ada' },
  { email: 'grace@example.test', first_name: 'Grace' },
  { email: 'lin@example.test' },
];
const UNSUBSCRIBED = { email: 'gone@example.test', first_name: 'Gone', unsubscribed: true };
const HTML =
  '<p>Hi {{{contact.first_name|there}}},</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>';

beforeAll(async () => {
  run = await startConsole();
  ({ api, page, origin } = run);
  await run.verifiedDomain('acme.test');
  ids.topic = (await call('POST', '/topics', { name: 'Product updates', default_subscription: 'opt_in' })).id;
  ids.segment = (await call('POST', '/segments', { name: 'Newsletter' })).id;
  for (const contact of [...CONTACTS, UNSUBSCRIBED]) {
    const created = await call('POST', '/contacts', contact);
    await call('POST', `/contacts/${created.id}/segments/${ids.segment}`);
    if (contact.email === 'ada@example.test') ids.ada = created.id;
  }
  await run.signIn();
}, 120_000);
afterAll(async () => {
  await run?.stop();
});

/** An API call that must succeed: its JSON. */
async function call(method: string, path: string, body?: unknown) {
  const answer = await api.call(method, path, body === undefined ? {} : { body });
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.json)}`).toBeLessThan(300);
  return answer.json;
}

/** A page of the navigation (other links on a page may have the same name). */
const nav = (name: string) => page.locator('header nav').getByRole('link', { name, exact: true });

const idIn = (section: string) => decodeURIComponent(page.url().split(`#/${section}/`)[1] ?? '');

/** The status badge in the broadcast's fields. */
const statusBadge = () => page.locator('dl.fields dd .badge').first();

/** How long a change may take to show (a request, then the page's reload, on a busy machine). */
const WAIT = { timeout: 10_000 };

describe('the Broadcasts page', () => {
  it('is in the navigation after Topics, and says how to start when there is none', async () => {
    const links = await page.locator('header nav a').allTextContents();
    expect(links.indexOf('Broadcasts')).toBe(links.indexOf('Topics') + 1);
    await nav('Broadcasts').click();
    await page.getByRole('heading', { name: 'Broadcasts', exact: true }).waitFor();
    await page.getByText('No broadcast yet.').waitFor();
  });

  it('composes a draft: its segment and topic chosen by name', async () => {
    await page.getByRole('link', { name: 'New broadcast' }).click();
    await page.getByRole('heading', { name: 'New broadcast' }).waitFor();
    // Nothing is created while the form lacks what a broadcast needs.
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.getByRole('alert').getByText('Choose the segment it goes to.', { exact: false }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('November news');
    await page.getByLabel('Segment').selectOption({ label: 'Newsletter' });
    await page.getByLabel('Topic').selectOption({ label: 'Product updates' });
    await page.getByLabel('From', { exact: true }).fill('Acme News <news@acme.test>');
    await page.getByLabel('Subject', { exact: true }).fill('Hello {{{contact.first_name|there}}}');
    await page.getByLabel('Reply to').fill('help@acme.test');
    await page.getByLabel('Preview text').fill('What is new in November');
    await page.getByLabel('HTML', { exact: true }).fill(HTML);
    await page.getByLabel('Text', { exact: true }).fill('Hi {{{FIRST_NAME|there}}}');
    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL(/#\/broadcasts\/[0-9a-f-]{36}$/);
    ids.draft = idIn('broadcasts');
    await page.getByRole('heading', { name: 'November news' }).waitFor();
    expect(await statusBadge().textContent()).toBe('draft');
    expect(await call('GET', `/broadcasts/${ids.draft}`)).toMatchObject({
      object: 'broadcast',
      name: 'November news',
      status: 'draft',
      segment_id: ids.segment,
      topic_id: ids.topic,
      from: 'Acme News <news@acme.test>',
      subject: 'Hello {{{contact.first_name|there}}}',
      reply_to: ['help@acme.test'],
      preview_text: 'What is new in November',
      html: HTML,
      text: 'Hi {{{FIRST_NAME|there}}}',
    });
  });

  it('saves an edit of the draft: only the changed field is sent', async () => {
    let patched: unknown;
    const listen = (request: { method(): string; url(): string; postDataJSON(): unknown }) => {
      if (request.method() === 'PATCH' && request.url().includes('/v1/broadcasts/'))
        patched = request.postDataJSON();
    };
    page.on('request', listen);
    expect(await page.getByRole('button', { name: 'Save draft' }).isDisabled()).toBe(true);
    await page.getByLabel('Subject', { exact: true }).fill('Hello {{{contact.first_name|there}}}, news!');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    page.off('request', listen);
    expect(patched).toEqual({ subject: 'Hello {{{contact.first_name|there}}}, news!' });
    expect((await call('GET', `/broadcasts/${ids.draft}`)).subject).toBe(
      'Hello {{{contact.first_name|there}}}, news!',
    );
  });

  it('previews it for a contact of the segment, in the sandboxed frame, and for a sample contact', async () => {
    await page.getByLabel('Contact', { exact: true }).selectOption({ label: 'ada@example.test' });
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await expect.poll(() => page.getByTestId('preview-subject').textContent(), WAIT).toBe('Hello Ada, news!');
    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await frame.getAttribute('srcdoc')).toContain('<p>Hi Ada,</p>');
    await page.frameLocator('iframe.preview').getByText('Hi Ada,').waitFor();
    expect(await page.getByTestId('preview-text').textContent()).toBe('Hi Ada');
    await page
      .getByLabel('Contact', { exact: true })
      .selectOption({ label: 'A sample contact with no fields' });
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await expect
      .poll(() => page.getByTestId('preview-subject').textContent(), WAIT)
      .toBe('Hello there, news!');
    expect(await frame.getAttribute('srcdoc')).toContain('<p>Hi there,</p>');
  });

  it("schedules it at a time picked in the browser's zone, sent to the API in UTC", async () => {
    const local = await page.evaluate(() => {
      const at = new Date(Date.now() + 2 * 3_600_000);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
    });
    const expected = await page.evaluate((value) => new Date(value).toISOString(), local);
    await page.getByLabel('Send at (your time zone)').fill(local);
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await expect.poll(() => statusBadge().textContent(), WAIT).toBe('scheduled');
    const scheduled = await call('GET', `/broadcasts/${ids.draft}`);
    expect(scheduled.status).toBe('scheduled');
    expect(Date.parse(scheduled.scheduled_at)).toBe(Date.parse(expected));
    // A scheduled broadcast is no longer edited.
    expect(await page.getByRole('button', { name: 'Save draft' }).count()).toBe(0);
  });

  it('cancels its schedule after confirmation: a draft again, nothing sent', async () => {
    await page.getByRole('button', { name: 'Cancel broadcast', exact: true }).click();
    await page.getByText('It becomes a draft again', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Cancel broadcast', exact: true }).click();
    await expect.poll(() => statusBadge().textContent(), WAIT).toBe('draft');
    await page.getByRole('status').filter({ hasText: 'Schedule canceled: a draft again.' }).waitFor();
    const canceled = await call('GET', `/broadcasts/${ids.draft}`);
    expect(canceled.status).toBe('draft');
    expect(canceled.scheduled_at ?? null).toBeNull();
    expect((await call('GET', '/emails')).data).toEqual([]);
    // A draft again: its form is back.
    await page.getByRole('button', { name: 'Save draft' }).waitFor();
  });

  it('duplicates it as a new draft with the same content', async () => {
    await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
    await page.waitForURL(
      (url) => /#\/broadcasts\/[0-9a-f-]{36}$/.test(url.hash) && !url.hash.endsWith(ids.draft as string),
    );
    ids.copy = idIn('broadcasts');
    await expect.poll(() => statusBadge().textContent(), WAIT).toBe('draft');
    expect(await call('GET', `/broadcasts/${ids.copy}`)).toMatchObject({
      status: 'draft',
      segment_id: ids.segment,
      topic_id: ids.topic,
      subject: 'Hello {{{contact.first_name|there}}}, news!',
      html: HTML,
    });
  });

  it('sends the copy now: one email per contact, the unsubscribed one left out, its progress shown', async () => {
    await page.getByRole('button', { name: 'Send now' }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => statusBadge().textContent(), { timeout: 30_000 }).toBe('sent');
    await expect
      .poll(() => page.getByTestId('progress').textContent(), { timeout: 10_000 })
      .toBe('3 emails made, one per contact; 3 handed to SES or ended. 1 contact left out (1 unsubscribed).');
    const sent = await call('GET', `/broadcasts/${ids.copy}`);
    expect(sent).toMatchObject({ status: 'sent', progress: { created: 3, done: true } });
    expect(sent.sent_at).toEqual(expect.any(String));
    // Each contact's email is its own, personal, with the broadcast's id.
    const emails = await waitFor(
      () => call('GET', '/emails'),
      (list) => list.data.length >= 3,
    );
    const subjects = emails.data.map((e: { subject: string }) => e.subject).sort();
    expect(subjects).toEqual(['Hello Ada, news!', 'Hello Grace, news!', 'Hello there, news!']);
  });

  it('shows its totals, its recipients by type and by address, and its clicked links', async () => {
    const region = () => page.getByRole('region', { name: 'Recipients' });
    const performance = page.getByRole('region', { name: 'Performance' });
    await expect
      .poll(
        () =>
          performance
            .locator('li.card')
            // Its label exactly: another card's (one never sent) holds the word too.
            .filter({ has: page.locator('.muted', { hasText: /^Sent$/ }) })
            .locator('.value')
            .textContent(),
        {
          timeout: 10_000,
        },
      )
      .toBe('3');
    const recipients = region();
    for (const contact of CONTACTS) await recipients.getByText(contact.email).waitFor();
    expect(await recipients.getByText(UNSUBSCRIBED.email).count()).toBe(0);
    let asked = '';
    const listen = (request: { url(): string }) => {
      if (request.url().includes('/recipients?')) asked = request.url();
    };
    page.on('request', listen);
    await recipients.getByLabel('Email', { exact: true }).fill('grace@example.test');
    await recipients.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => recipients.getByText('ada@example.test').count(), WAIT).toBe(0);
    await recipients.getByText('grace@example.test').waitFor();
    expect(new URL(asked).searchParams.get('email')).toBe('grace@example.test');
    expect(new URL(asked).searchParams.get('type')).toBe('sent');
    await recipients.getByLabel('Email', { exact: true }).fill('');
    await recipients.getByRole('button', { name: 'Filter' }).click();
    // Delivered, as the local SES reports each (asked again until all three are).
    await expect
      .poll(
        async () => {
          await page.reload();
          await region().getByLabel('Type', { exact: true }).selectOption('delivered');
          await region().locator('table, .empty').first().waitFor();
          return region().getByText('@example.test').count();
        },
        { timeout: 20_000 },
      )
      .toBe(3);
    // Bounced: none, with its bounce-type filter.
    await region().getByLabel('Type', { exact: true }).selectOption('bounced');
    await region().getByLabel('Bounce type').waitFor();
    await page.getByText('No bounced recipient yet.').waitFor();
    page.off('request', listen);
    await page.getByRole('region', { name: 'Clicked links' }).getByText('No link clicked yet.').waitFor();
    await region().getByLabel('Type', { exact: true }).selectOption('sent');
    await region().getByText('ada@example.test').waitFor();
    await page.screenshot({ path: 'docs/console/broadcast.png', fullPage: true });
  });

  it('lists the broadcasts with their status and segment', async () => {
    await page.getByRole('link', { name: '← Broadcasts' }).click();
    await page.getByRole('heading', { name: 'Broadcasts', exact: true }).waitFor();
    const rows = page.getByRole('row').filter({ hasText: 'November news' });
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    const withBadge = (status: string) =>
      rows.filter({ has: page.locator('.badge', { hasText: new RegExp(`^${status}$`) }) });
    await withBadge('draft').getByRole('link', { name: 'Newsletter' }).waitFor();
    await withBadge('sent').getByRole('link', { name: 'Newsletter' }).waitFor();
    await page.screenshot({ path: 'docs/console/broadcasts.png', fullPage: true });
  });
});

describe('the Broadcasts pages at 375 px', () => {
  it('are no wider than the screen, their lists cards, no word broken', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of [
      '#/broadcasts',
      '#/broadcasts/new',
      `#/broadcasts/${ids.copy}`,
      `#/broadcasts/${ids.draft}`,
    ]) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('main h1').waitFor();
      await expect
        .poll(() => page.locator('main').getByText('Loading…').count(), { timeout: 10_000 })
        .toBe(0);
      expect(await layoutProblems(page, { cards: true }), hash).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

describe('a sending-access key', () => {
  it('is told, in words, that broadcasts need a full-access key, and shown no form', async () => {
    const key = await call('POST', '/api-keys', { name: 'Sender', permission: 'sending_access' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await run.signIn(key.token);
    for (const hash of ['#/broadcasts', '#/broadcasts/new']) {
      await page.goto(`${origin}/${hash}`);
      await expect
        .poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 })
        .toContain('This key has sending access only: sign in with a full-access key to see the broadcasts.');
      expect(await page.locator('main form, main select, main textarea').count(), hash).toBe(0);
      expect(await page.getByRole('link', { name: 'New broadcast' }).count(), hash).toBe(0);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await run.signIn();
  });
});

describe('deleting', () => {
  it('deletes a draft after confirmation', async () => {
    const draft = await call('POST', '/broadcasts', {
      name: 'Scratch',
      segment_id: ids.segment,
      from: 'news@acme.test',
      subject: 'Scratch',
      text: 'Scratch',
    });
    await page.goto(`${origin}/#/broadcasts/${draft.id}`);
    await page.getByRole('button', { name: 'Delete broadcast' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(/#\/broadcasts$/);
    expect((await api.call('GET', `/broadcasts/${draft.id}`)).status).toBe(404);
  });
});

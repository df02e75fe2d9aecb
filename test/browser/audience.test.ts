import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import type { httpsClient } from '../support/https.js';
import { layoutProblems } from '../support/layout.js';

/**
 * The Contacts, Segments and Topics pages in headless Chromium over the local service: a topic, a
 * segment and a contact made through the pages (and read back through the API), a contact found by
 * its address in another case with a `+`, added to a segment and taken out of it, its topic choices
 * and global unsubscribe saved, its properties shown; the contact list filtered by segment; a
 * segment renamed and its contacts listed; a topic edited; everything deleted after confirmation
 * (the API then answers 404). Then the pages at 375 px. Takes docs/console/contacts.png,
 * docs/console/contact.png, docs/console/segments.png and docs/console/topics.png.
 */
let run: ConsoleRun;
let api: ReturnType<typeof httpsClient>;
let page: Page;
let origin: string;
const ids: Record<string, string> = {};

/** The address as the page is given it, and the same address as someone searches for it. */
const ADDRESS = 'Ada.Lovelace+news@Example.test';
const SEARCHED = 'ada.lovelace+NEWS@example.TEST';

beforeAll(async () => {
  run = await startConsole();
  ({ api, page, origin } = run);
  await run.signIn();
});
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

describe('the Topics page', () => {
  it('is in the navigation, and says how to start when there is none', async () => {
    await nav('Topics').click();
    await page.getByRole('heading', { name: 'Topics', exact: true }).waitFor();
    await page.getByText('No topic yet.').waitFor();
  });

  it('creates a topic with its default subscription and visibility', async () => {
    expect(await page.getByRole('button', { name: 'Create topic' }).isDisabled()).toBe(true);
    await page.getByLabel('Name', { exact: true }).fill('Product updates');
    await page.getByLabel('Description', { exact: true }).fill('New features, once a month');
    await page.getByLabel('Default subscription').selectOption('opt_in');
    await page.getByLabel('Visibility').selectOption('public');
    await page.getByRole('button', { name: 'Create topic' }).click();
    await page.waitForURL(/#\/topics\/[0-9a-f-]{36}$/);
    ids.product = idIn('topics');
    await page.getByRole('heading', { name: 'Product updates' }).waitFor();
    expect(await call('GET', `/topics/${ids.product}`)).toMatchObject({
      name: 'Product updates',
      description: 'New features, once a month',
      default_subscription: 'opt_in',
      visibility: 'public',
    });
  });

  it('edits its name, description and visibility, but not its default subscription', async () => {
    expect(await page.getByLabel('Default subscription').count()).toBe(0);
    await page.getByText('It cannot change after creation.').waitFor();
    await page.getByLabel('Description', { exact: true }).fill('New features, now and then');
    await page.getByLabel('Visibility').selectOption('private');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved.', { exact: true }).waitFor();
    expect(await call('GET', `/topics/${ids.product}`)).toMatchObject({
      name: 'Product updates',
      description: 'New features, now and then',
      default_subscription: 'opt_in',
      visibility: 'private',
    });
  });

  it('lists the topics', async () => {
    ids.digest = (
      await call('POST', '/topics', { name: 'Weekly digest', default_subscription: 'opt_out' })
    ).id;
    await page.getByRole('link', { name: '← Topics' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Weekly digest' });
    await row.getByText('opt out').waitFor();
    await page.getByRole('row').filter({ hasText: 'Product updates' }).getByText('private').waitFor();
    await page.screenshot({ path: 'docs/console/topics.png', fullPage: true });
  });
});

describe('the Segments page', () => {
  it('creates a segment and renames it', async () => {
    await nav('Segments').click();
    await page.getByText('No segment yet.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Newsletter');
    await page.getByRole('button', { name: 'Create segment' }).click();
    await page.waitForURL(/#\/segments\/[0-9a-f-]{36}$/);
    ids.segment = idIn('segments');
    await page.getByRole('heading', { name: 'Newsletter' }).waitFor();
    await page.getByText('No contact in this segment.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Newsletter readers');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByRole('heading', { name: 'Newsletter readers' }).waitFor();
    expect(await call('GET', `/segments/${ids.segment}`)).toMatchObject({ name: 'Newsletter readers' });
  });
});

describe('the Contacts page', () => {
  it('says how to start, and adds a contact', async () => {
    await nav('Contacts').click();
    await page.getByText('No contact yet.').waitFor();
    await page.getByLabel('Email address').fill(ADDRESS);
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await page.waitForURL(/#\/contacts\/[0-9a-f-]{36}$/);
    ids.contact = idIn('contacts');
    expect(await call('GET', `/contacts/${ids.contact}`)).toMatchObject({
      email: ADDRESS,
      first_name: 'Ada',
      last_name: 'Lovelace',
      unsubscribed: false,
    });
  });

  it('finds a contact by its address, in any case and with its +', async () => {
    await page.getByRole('link', { name: '← Contacts' }).click();
    await page.getByLabel('Find by address').fill(SEARCHED);
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await page.getByRole('heading', { name: ADDRESS }).waitFor();
    await page.getByText(ids.contact as string).waitFor();
    // An address without a contact says so.
    await page.goto(`${origin}/#/contacts/${encodeURIComponent('nobody@example.test')}`);
    await page.getByText('No contact with this address.').waitFor();
  });

  it("shows a contact's properties", async () => {
    await call('POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'free' });
    await call('PATCH', `/contacts/${ids.contact}`, { properties: { plan: 'enterprise' } });
    await page.goto(`${origin}/#/contacts/${ids.contact}`);
    await page.getByRole('row').filter({ hasText: 'plan' }).getByText('enterprise').waitFor();
  });

  it('adds the contact to a segment, listed on both pages and in the list filtered by it', async () => {
    await page.getByText('In no segment.').waitFor();
    await page.getByLabel('Add to segment').selectOption({ label: 'Newsletter readers' });
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Added to Newsletter readers.' }).waitFor();
    await page.getByRole('link', { name: 'Newsletter readers' }).waitFor();
    const segments = await call('GET', `/contacts/${ids.contact}/segments`);
    expect(segments.data.map((s: { id: string }) => s.id)).toEqual([ids.segment]);

    // Another contact, in no segment: in the whole list, not in the segment's.
    await call('POST', '/contacts', { email: 'grace@example.test', first_name: 'Grace' });
    await page.goto(`${origin}/#/contacts`);
    await page.getByRole('link', { name: 'grace@example.test' }).waitFor();
    await page.getByLabel('Segment').selectOption({ label: 'Newsletter readers' });
    await page.waitForURL(new RegExp(`#/contacts\\?segment=${ids.segment}$`));
    await page.getByRole('link', { name: ADDRESS }).waitFor();
    expect(await page.getByRole('link', { name: 'grace@example.test' }).count()).toBe(0);
    await page.screenshot({ path: 'docs/console/contacts.png', fullPage: true });

    await page.goto(`${origin}/#/segments/${ids.segment}`);
    await page.getByRole('link', { name: ADDRESS }).waitFor();
    await page.screenshot({ path: 'docs/console/segments.png', fullPage: true });
  });

  it("saves the contact's topic choices: only those changed", async () => {
    await page.goto(`${origin}/#/contacts/${ids.contact}`);
    const product = page.getByRole('checkbox', { name: 'Product updates' });
    const digest = page.getByRole('checkbox', { name: 'Weekly digest' });
    // With no choice of its own, each topic's default.
    expect(await product.isChecked()).toBe(true);
    expect(await digest.isChecked()).toBe(false);
    expect(await page.getByRole('button', { name: 'Save topics' }).isDisabled()).toBe(true);
    await digest.check();
    await product.uncheck();
    let patched: unknown;
    page.on('request', (request) => {
      if (request.method() === 'PATCH' && request.url().endsWith('/topics')) patched = request.postDataJSON();
    });
    await page.getByRole('button', { name: 'Save topics' }).click();
    await page.getByRole('status').filter({ hasText: 'Topics saved.' }).waitFor();
    await page.screenshot({ path: 'docs/console/contact.png', fullPage: true });
    expect(patched).toEqual({
      topics: expect.arrayContaining([
        { id: ids.product, subscription: 'opt_out' },
        { id: ids.digest, subscription: 'opt_in' },
      ]),
    });
    const topics = await call('GET', `/contacts/${ids.contact}/topics`);
    const choices = Object.fromEntries(
      topics.data.map((t: { id: string; subscription: string }) => [t.id, t.subscription]),
    );
    expect(choices).toEqual({ [ids.product as string]: 'opt_out', [ids.digest as string]: 'opt_in' });
  });

  it('unsubscribes the contact from everything', async () => {
    await page.getByRole('checkbox', { name: 'Unsubscribed from everything' }).check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved.', { exact: true }).waitFor();
    await page.locator('dl.fields').getByText('unsubscribed').waitFor();
    expect(await call('GET', `/contacts/${ids.contact}`)).toMatchObject({
      unsubscribed: true,
      first_name: 'Ada',
    });
  });

  it('takes the contact out of the segment after confirmation', async () => {
    await page
      .getByRole('row')
      .filter({ hasText: 'Newsletter readers' })
      .getByRole('button', { name: 'Remove' })
      .click();
    await page.getByText('The contact and the segment stay.', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByText('In no segment.').waitFor();
    expect((await call('GET', `/contacts/${ids.contact}/segments`)).data).toEqual([]);
  });
});

describe('the three pages at 375 px', () => {
  it('are no wider than the screen, their lists cards, no word broken', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    for (const hash of [
      '#/contacts',
      `#/contacts/${ids.contact}`,
      '#/segments',
      `#/segments/${ids.segment}`,
      '#/topics',
      `#/topics/${ids.product}`,
    ]) {
      await page.goto(`${origin}/${hash}`);
      await page.locator('main h1').waitFor();
      await page.locator('main table, main .empty, main dl').first().waitFor({ timeout: 10_000 });
      expect(await layoutProblems(page, { cards: true }), hash).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

describe('a sending-access key', () => {
  it('is told, in words, that the three pages need a full-access key, and shown no form', async () => {
    const key = await call('POST', '/api-keys', { name: 'Sender', permission: 'sending_access' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await run.signIn(key.token);
    for (const [link, what] of [
      ['Contacts', 'the contacts'],
      ['Segments', 'the segments'],
      ['Topics', 'the topics'],
    ] as const) {
      await nav(link).click();
      await page.getByRole('heading', { name: link, exact: true }).waitFor();
      await expect
        .poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 })
        .toContain(`This key has sending access only: sign in with a full-access key to see ${what}.`);
      expect(await page.locator('main form, main select').count(), link).toBe(0);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await run.signIn();
  });
});

describe('deleting', () => {
  it('deletes the contact, the segment and the topic after confirmation', async () => {
    for (const [section, id, label, back] of [
      ['contacts', ids.contact, 'Delete contact', /#\/contacts$/],
      ['segments', ids.segment, 'Delete segment', /#\/segments$/],
      ['topics', ids.product, 'Delete topic', /#\/topics$/],
    ] as const) {
      await page.goto(`${origin}/#/${section}/${id}`);
      await page.getByRole('button', { name: label }).click();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.waitForURL(back);
      expect((await api.call('GET', `/${section}/${id}`)).status, section).toBe(404);
    }
    // The other contact stays.
    await page.getByRole('heading', { name: 'Topics', exact: true }).waitFor();
    expect((await api.call('GET', '/contacts/grace@example.test')).status).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRun, startConsole } from '../support/browser.js';
import { waitFor } from '../support/https.js';

/**
 * The local mailbox (the page at the viewer port, `Sent mail` in what npm start prints): an
 * email's HTML only in the console's sandbox, where none of its scripts runs, on a page with no
 * script of its own; `/store` still the emulator's JSON.
 */
let run: ConsoleRun;
beforeAll(async () => {
  run = await startConsole();
  await run.verifiedDomain('acme.test');
});
afterAll(async () => {
  await run?.stop();
});

// If any of these ran it would write RAN in the frame and change the page's title.
const html =
  '<p style="color:#0a0">Hello from the <b>mailbox</b> test <a href="https://example.com/docs?a=1&amp;b=2">docs</a></p>' +
  "<img src=\"x\" onerror=\"document.body.append('RAN-'+'ERR');top.document.title='pwned'\">" +
  "<script>document.body.append('RAN-'+'OK');top.document.title='pwned'</script>";

describe('the sent-mail page at the viewer port', () => {
  it('lists what the local SES received and shows an email’s HTML in the sandbox, where no script runs', async () => {
    const { api, context, service } = run;
    const sent = await api.call('POST', '/emails', {
      body: {
        from: 'Acme <hello@acme.test>',
        to: 'mailbox-check@example.com',
        subject: 'Mailbox <i>check</i>',
        html,
        text: 'Hello from the mailbox test',
      },
    });
    expect(sent.status).toBe(200);
    const viewer = service.viewerUrl;
    const stored = await waitFor(
      async () => (await fetch(`${viewer}/store`)).json() as Promise<{ emails: { subject: string }[] }>,
      (store) => store.emails.some((e) => e.subject === 'Mailbox <i>check</i>'),
      20_000,
    );
    // /store keeps the emulator's shape: { templates, emails: [{ messageId, from, destination, body, … }] }.
    expect(Object.keys(stored).sort()).toEqual(['emails', 'templates']);
    expect(stored.emails.find((e) => e.subject === 'Mailbox <i>check</i>')).toMatchObject({
      messageId: expect.any(String),
      from: 'Acme <hello@acme.test>',
      destination: { to: ['mailbox-check@example.com'], cc: [], bcc: [] },
      body: { html, text: 'Hello from the mailbox test' },
      at: expect.any(Number),
    });

    const page = await context.newPage();
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    const answer = await page.goto(`${viewer}/`);
    const csp = answer?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(await page.locator('script').count()).toBe(0);
    // The subject is text, never markup.
    const link = page.getByRole('link', { name: 'Mailbox <i>check</i>' });
    await link.click();
    await page.getByRole('heading', { name: 'Mailbox <i>check</i>' }).waitFor();
    await page.getByText('mailbox-check@example.com').first().waitFor();
    await page.getByText('Hello from the mailbox test').waitFor();
    const title = await page.title();
    expect(title).toBe('Mailbox <i>check</i>');

    const frame = page.locator('iframe.preview');
    expect(await frame.getAttribute('sandbox')).toBe('');
    const preview = page.frameLocator('iframe.preview');
    await preview.getByText('Hello from the').waitFor();
    expect(
      await preview
        .locator('p')
        .evaluate(
          (p) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(p)
              .color,
        ),
    ).toBe('rgb(0, 170, 0)');
    expect(await preview.getByText(/RAN-/).count()).toBe(0);
    expect(await page.title()).toBe(title);
    // Remote images on (a link, not a script): still no script of the email runs.
    await page.getByRole('link', { name: 'Load remote images' }).click();
    await page.frameLocator('iframe.preview').getByText('Hello from the').waitFor();
    expect(await page.frameLocator('iframe.preview').getByText(/RAN-/).count()).toBe(0);
    expect(await page.title()).toBe(title);
    expect(scripts).toEqual([]);
    // Its links are listed on the page itself (the frame follows none), to open as a reader would.
    const listed = page.getByRole('link', { name: 'https://example.com/docs?a=1&b=2' });
    expect(await listed.getAttribute('href')).toBe('https://example.com/docs?a=1&b=2');
    expect(await listed.getAttribute('rel')).toBe('noopener noreferrer');

    // The raw message is text, not a page that could run what the email holds.
    const raw = await page.goto(
      `${viewer}/get-emlContent?messageId=${encodeURIComponent(new URL(page.url()).searchParams.get('id') ?? '')}`,
    );
    expect(raw?.headers()['content-type']).toMatch(/^text\/plain/);
    expect(raw?.headers()['x-content-type-options']).toBe('nosniff');

    // The control: the same HTML in a frame that may run scripts does write RAN-, so the checks
    // above would see a script that ran.
    const control = await context.newPage();
    await control.setContent('<iframe sandbox="allow-scripts"></iframe>');
    await control.locator('iframe').evaluate((f, srcdoc) => {
      (f as unknown as { srcdoc: string }).srcdoc = srcdoc;
    }, html);
    await control.frameLocator('iframe').getByText(/RAN-/).first().waitFor({ timeout: 10_000 });
    await control.close();
    await page.close();
  });
});

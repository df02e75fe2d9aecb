/**
 * Open and click tracking end to end, over HTTPS with the official `resend` SDK against `npm start`:
 * `domains.update` turns tracking on, an HTML email with links is sent, the reader's client loads
 * the pixel and follows a link from the message as the local SES stored it, and the email, its
 * events, its recipient and the signed webhooks say so. Every domain and email answer is checked
 * against Resend's own document.
 */

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;
let tracking: string;

beforeAll(async () => {
  ({ service, seen, stop } = await runSdkProgram('test/e2e/sdk/tracking-user.ts'));
  tracking = /Tracking\s+(\S+)/.exec(service.output())?.[1] ?? '';
  expect(tracking).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
}, 150_000);
afterAll(() => stop?.());

describe('open and click tracking with the official resend SDK, against npm start', () => {
  it('domains.update takes the settings and answers as Resend documents; the domain shows them', () => {
    expect(seen.created).toMatchObject({ open_tracking: false, click_tracking: false });
    expectResendShape(seen.created, 'CreateDomainResponse');
    expect(seen.updated).toEqual({ object: 'domain', id: seen.created.id });
    expectResendShape(seen.updated, 'UpdateDomainResponseSuccess');
    expect(seen.tracked).toMatchObject({ open_tracking: true, click_tracking: true, tls: 'opportunistic' });
    expectResendShape(seen.tracked, 'Domain');
  });

  it('the stored message has its links rewritten to the tracking host and the pixel; ses:no-track and the text stay as written', () => {
    const { hrefs, images, text } = seen.stored;
    expect(hrefs).toHaveLength(3);
    expect(hrefs[0]).toMatch(new RegExp(`^${tracking}/L0/`));
    expect(hrefs[1]).toMatch(new RegExp(`^${tracking}/L0/`));
    expect(hrefs[2]).toBe('https://track.test/unsubscribe');
    expect(images).toEqual([expect.stringMatching(new RegExp(`^${tracking}/I0/`))]);
    expect(text).toBe('Hello https://track.test/pricing');
  });

  it('the pixel is a GIF; a link redirects to the URL that was in the email, and only that; a forged token goes nowhere', () => {
    expect(seen.pixel).toMatchObject({ status: 200, type: 'image/gif' });
    expect(seen.pixel.bytes).toBeGreaterThan(0);
    expect(seen.click).toEqual({ status: 302, location: 'https://track.test/pricing?plan=pro' });
    expect(seen.forged).toEqual({ status: 404, location: null });
  });

  it('the email: last_event clicked, status still delivered, the open and the click in its events and its recipient', () => {
    const email = seen.clicked;
    expect(email).toMatchObject({ status: 'delivered', last_event: 'clicked' });
    expectResendShape(email, 'Email');
    const types = email.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['delivered', 'opened', 'clicked']));
    const click = email.events.find((e: { type: string }) => e.type === 'clicked');
    expect(click).toMatchObject({
      detail: expect.stringContaining('https://track.test/pricing?plan=pro'),
      user_agent: 'Mozilla/5.0 (Macintosh) Thunderbird/128.0',
      ip_address: '127.0.0.1',
    });
    expect(email.recipients).toEqual([
      expect.objectContaining({ email: 'reader@example.com', status: 'delivered', last_event: 'clicked' }),
    ]);
  });

  it('email.opened and email.clicked arrive signed, in Resend shapes, the click with its link', () => {
    const verifier = new Webhook(seen.signingSecret);
    const events = seen.hooks.map((h: { headers: Record<string, string>; body: string }) =>
      verifier.verify(h.body, h.headers),
    ) as { type: string; data: Record<string, unknown> }[];
    const opened = events.find((e) => e.type === 'email.opened');
    const clicked = events.find((e) => e.type === 'email.clicked');
    expect(opened?.data).toMatchObject({ email_id: seen.emailId, subject: 'Tracked' });
    expectResendShape(opened, 'EmailOpenedEvent');
    expect(clicked?.data.click).toMatchObject({
      link: 'https://track.test/pricing?plan=pro',
      ipAddress: '127.0.0.1',
      userAgent: 'Mozilla/5.0 (Macintosh) Thunderbird/128.0',
      timestamp: expect.any(String),
    });
    expectResendShape(clicked, 'EmailClickedEvent');
  });

  it("TLS enforced and a tracking subdomain: the domain's own set, its Tracking records, and sends that go on through it", () => {
    expect(seen.strict).toEqual({ object: 'domain', id: seen.created.id });
    expect(seen.strictDomain).toMatchObject({ tls: 'enforced', tracking_subdomain: 'links' });
    expect(seen.strictDomain.records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          record: 'Tracking',
          type: 'CNAME',
          name: 'links.track.test',
          value: 'tracking.email-service.localhost',
          status: 'verified',
        }),
        expect.objectContaining({ record: 'TrackingCAA', type: 'CAA', name: 'track.test' }),
      ]),
    );
    expectResendShape(seen.strictDomain, 'Domain');
    expectResendShape(seen.list, 'ListDomainsResponse');
    // The set's custom redirect domain, shown by the local tracking host (nothing leaves the machine).
    expect(seen.strictStored[0]).toMatch(new RegExp(`^${tracking}/L0/.*domain=links\\.track\\.test`));
  });

  it('a capability Resend refuses here comes back as a validation_error the SDK reads', () => {
    expect(seen.refused.data).toBeNull();
    expect(seen.refused.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
  });
});

/**
 * Opens and clicks applied to an email: they move `last_event` (per recipient too) and never the
 * status, whatever order they come in, however often; they are counted, kept as the email's
 * events, and raised as Resend's `email.opened` / `email.clicked`, flagged when a machine made them.
 */

import { describe, expect, it } from 'vitest';
import { automatedReason } from '../../functions/emails/engagement.js';
import { recipientOutcomes, recipientsOf } from '../../functions/emails/recipients.js';
import { type DeliveryEvent, recordDeliveryEvent } from '../../functions/emails/record-event.js';
import { lastEventOf } from '../../functions/emails/status.js';
import type { CounterName } from '../../functions/shared/ports.js';
import { messageBody, type WebhookEvent, type WebhookEventType } from '../../functions/webhooks/model.js';
import { permutations } from '../support/arbitraries.js';
import { emailContent } from '../support/fakes.js';
import { MemoryEmails } from '../support/memory-emails.js';
import { expectResendShape } from '../support/resend-schema.js';

const [a, b] = ['a@example.com', 'b@example.com'];
const sent = { at: '2026-11-24T10:00:00.000Z', providerMessageId: 'mid-1' };
const email = { from: 'Acme <hello@acme.test>', subject: 'Your receipt', tags: { category: 'receipt' } };
const event = (
  type: DeliveryEvent['type'],
  recipients: string[],
  at: string,
  extra: Partial<DeliveryEvent> = {},
): DeliveryEvent => ({
  emailId: 'em_01m8ag3dqyf1cb6j7cx1pmg03t',
  type,
  at,
  recipients,
  sent,
  email,
  ...extra,
});
const opened = (recipients: string[], at: string, userAgent = 'Mozilla/5.0 (Macintosh) Safari/605.1.15') =>
  event('opened', recipients, at, {
    engagement: { ipAddress: '192.0.2.1', userAgent, timestamp: at },
  });
const clicked = (recipients: string[], at: string, link = 'https://acme.test/pricing') =>
  event('clicked', recipients, at, {
    engagement: {
      ipAddress: '192.0.2.1',
      userAgent: 'Mozilla/5.0 (Macintosh) Safari/605.1.15',
      timestamp: at,
      link,
    },
  });

async function run(to: string[], events: DeliveryEvent[]) {
  const emails = new MemoryEmails(recipientsOf(emailContent({ to })));
  const published: WebhookEvent[] = [];
  const counted: CounterName[] = [];
  const deps = {
    emails: emails as never,
    events: {
      subscriptions: async () => ({
        wants: (_: WebhookEventType) => true,
        publish: async (built: WebhookEvent[]) => void published.push(...built),
      }),
    },
    counters: { count: (name: CounterName) => void counted.push(name) },
  };
  let changes = 0;
  for (const e of events) if ((await recordDeliveryEvent(deps, e)).statusChanged) changes++;
  return {
    changes,
    status: emails.status,
    last_event: lastEventOf(emails.marks()),
    recipients: recipientOutcomes(emails.recipients, [...emails.events.values()], {
      status: emails.status,
      sentAt: emails.sentAt ?? null,
    }).map((r) => [r.email, r.status, r.last_event]),
    events: [...emails.events.values()],
    published,
    counted,
  };
}

describe('opens and clicks', () => {
  it('a delivered email opened and clicked, duplicated, in every order: delivered, last_event clicked', async () => {
    const events = [
      event('delivered', [a], '2026-11-24T10:00:01.000Z'),
      opened([a], '2026-11-24T10:03:00.000Z'),
      opened([a], '2026-11-24T10:03:00.000Z'),
      clicked([a], '2026-11-24T10:04:00.000Z'),
      clicked([a], '2026-11-24T10:04:00.000Z'),
      opened([a], '2026-11-24T12:00:00.000Z'),
    ];
    let orders = 0;
    for (const order of permutations(events)) {
      orders++;
      const result = await run([a], order);
      expect(result).toMatchObject({
        changes: 1,
        status: 'delivered',
        last_event: 'clicked',
        recipients: [[a, 'delivered', 'clicked']],
      });
    }
    expect(orders).toBe(720);
  });

  it('never settles nor un-settles: opens before any outcome leave the email queued; a bounce or complaint wins', async () => {
    const early = await run(
      [a, b],
      [opened([a, b], '2026-11-24T10:03:00.000Z'), clicked([a, b], '2026-11-24T10:04:00.000Z')],
    );
    expect(early).toMatchObject({ changes: 0, status: 'queued', last_event: 'clicked' });
    // No outcome yet for either recipient: their status waits, their news moves.
    expect(early.recipients).toEqual([
      [a, 'queued', 'clicked'],
      [b, 'queued', 'clicked'],
    ]);

    const bounce = event('bounced', [b], '2026-11-24T10:00:02.000Z', {
      detail: 'Permanent: General: smtp; 550 5.1.1 user unknown',
      bounce: { type: 'Permanent', subType: 'General' },
    });
    const events = [
      event('delivered', [a], '2026-11-24T10:00:01.000Z'),
      bounce,
      opened([a, b], '2026-11-24T10:03:00.000Z'),
      clicked([a, b], '2026-11-24T10:04:00.000Z'),
      event('complained', [a], '2026-11-24T11:00:00.000Z'),
    ];
    for (const order of permutations(events)) {
      const result = await run([a, b], order);
      expect(result).toMatchObject({
        changes: 1,
        status: 'bounced',
        last_event: 'complained',
        recipients: [
          [a, 'complained', 'complained'],
          [b, 'bounced', 'bounced'],
        ],
      });
    }
    // Without the complaint, the bounce stays the email's news over the opens and clicks.
    const withoutComplaint = await run([a, b], events.slice(0, 4));
    expect(withoutComplaint).toMatchObject({ status: 'bounced', last_event: 'bounced' });
    expect(withoutComplaint.recipients).toEqual([
      [a, 'delivered', 'clicked'],
      [b, 'bounced', 'bounced'],
    ]);
  });

  it("keeps each as one of the email's events, counts it, and raises Resend's email.opened and email.clicked", async () => {
    const result = await run(
      [a],
      [
        event('delivered', [a], '2026-11-24T10:00:01.000Z'),
        opened([a], '2026-11-24T10:03:00.000Z'),
        clicked([a], '2026-11-24T10:04:00.000Z'),
        clicked([a], '2026-11-24T10:04:00.000Z', 'https://acme.test/other'),
      ],
    );
    expect(result.events.filter((e) => e.type !== 'delivered')).toEqual([
      {
        type: 'opened',
        at: '2026-11-24T10:03:00.000Z',
        recipients: [a],
        user_agent: expect.any(String),
        ip_address: '192.0.2.1',
      },
      {
        type: 'clicked',
        at: '2026-11-24T10:04:00.000Z',
        recipients: [a],
        detail: 'https://acme.test/pricing',
        user_agent: expect.any(String),
        ip_address: '192.0.2.1',
      },
      {
        type: 'clicked',
        at: '2026-11-24T10:04:00.000Z',
        recipients: [a],
        detail: 'https://acme.test/other',
        user_agent: expect.any(String),
        ip_address: '192.0.2.1',
      },
    ]);
    expect(result.counted.filter((c) => c === 'EventsOpened' || c === 'EventsClicked')).toEqual([
      'EventsOpened',
      'EventsClicked',
      'EventsClicked',
    ]);
    const [open, click] = result.published.filter(
      (e) => e.type === 'email.opened' || e.type === 'email.clicked',
    );
    const openBody = JSON.parse(messageBody(open as WebhookEvent));
    const clickBody = JSON.parse(messageBody(click as WebhookEvent));
    expectResendShape(openBody, 'EmailOpenedEvent');
    expectResendShape(clickBody, 'EmailClickedEvent');
    expect(openBody.data).not.toHaveProperty('click');
    expect(clickBody).toMatchObject({
      type: 'email.clicked',
      created_at: '2026-11-24T10:04:00.000Z',
      data: {
        to: [a],
        tags: { category: 'receipt' },
        click: {
          ipAddress: '192.0.2.1',
          link: 'https://acme.test/pricing',
          timestamp: '2026-11-24T10:04:00.000Z',
          userAgent: 'Mozilla/5.0 (Macintosh) Safari/605.1.15',
        },
      },
    });
    expect(clickBody.data).not.toHaveProperty('automated');
    // Two clicks of the same moment on two links are two messages (message ids come from the key).
    const clicks = result.published.filter((e) => e.type === 'email.clicked');
    expect(new Set(clicks.map((e) => e.key)).size).toBe(2);
  });

  it('flags a machine-made open, keeps it (event, webhook, last_event) and counts it', async () => {
    const proxy = {
      ...opened([a], '2026-11-24T10:00:02.000Z', 'Mozilla/5.0'),
      automated: 'privacy_proxy' as const,
    };
    const result = await run([a], [event('delivered', [a], '2026-11-24T10:00:01.000Z'), proxy]);
    expect(result.last_event).toBe('opened');
    expect(result.events.find((e) => e.type === 'opened')?.automated).toBe('privacy_proxy');
    const body = JSON.parse(
      messageBody(result.published.find((e) => e.type === 'email.opened') as WebhookEvent),
    );
    expectResendShape(body, 'EmailOpenedEvent');
    expect(body.data.automated).toBe('privacy_proxy');
    expect(result.counted).toContain('EventsAutomated');
  });

  it('an open or click first to say SES has the email raises email.sent too, once', async () => {
    const result = await run(
      [a],
      [opened([a], '2026-11-24T10:03:00.000Z'), opened([a], '2026-11-24T10:03:00.000Z')],
    );
    expect(result.published.map((e) => e.type)).toEqual(['email.sent', 'email.opened', 'email.opened']);
    expect(result.status).toBe('queued');
  });
});

describe('automatedReason', () => {
  it('reads proxies and scanners from the user agent, and haste from the seconds since sending', () => {
    expect(automatedReason('Mozilla/5.0', 600)).toBe('privacy_proxy');
    expect(automatedReason('Mozilla/5.0 (via ggpht.com GoogleImageProxy)', 600)).toBe('privacy_proxy');
    expect(
      automatedReason('YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html', 600),
    ).toBe('privacy_proxy');
    expect(automatedReason('Mozilla/5.0 (compatible; proofpoint)', 600)).toBe('scanner');
    expect(automatedReason('Go-http-client/1.1', 600)).toBe('scanner');
    expect(
      automatedReason('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 600),
    ).toBe('scanner');
    expect(automatedReason('Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 600)).toBe(
      'scanner',
    );
    // A phone whose name ends in "bot" is a reader.
    expect(
      automatedReason('Mozilla/5.0 (Linux; Android 10; CUBOT X19) Mobile Safari/537.36', 600),
    ).toBeUndefined();
    expect(automatedReason(undefined, 600)).toBe('scanner');
    expect(automatedReason('Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) Mobile/15E148', 2)).toBe(
      'too_soon',
    );
    expect(
      automatedReason('Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) Mobile/15E148', 60),
    ).toBeUndefined();
    expect(
      automatedReason('Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) Mobile/15E148', undefined),
    ).toBeUndefined();
  });
});

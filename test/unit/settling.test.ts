/**
 * The settling rule of an email with several recipients, over every order of its events: each
 * recipient's outcome counts once, the email settles once every recipient has one, and the same
 * events in any order, duplicated, give the same status, `last_event` and per-recipient outcomes.
 */

import { describe, expect, it } from 'vitest';
import { recipientOutcomes, recipientsOf } from '../../functions/emails/recipients.js';
import { type DeliveryEvent, recordDeliveryEvent } from '../../functions/emails/record-event.js';
import { lastEventOf, lostReason } from '../../functions/emails/status.js';
import { permutations } from '../support/arbitraries.js';
import { emailContent } from '../support/fakes.js';
import { MemoryEmails } from '../support/memory-emails.js';

const [a, b, c] = ['a@example.com', 'b@example.com', 'c@example.com'];
const sent = { at: '2026-11-24T10:00:00.000Z', providerMessageId: 'mid-1' };
const event = (
  type: DeliveryEvent['type'],
  recipient: string,
  at: string,
  extra: Partial<DeliveryEvent> = {},
) => ({
  emailId: 'em_x',
  type,
  at,
  recipients: [recipient],
  sent,
  ...extra,
});
const bounceOf = (recipient: string) =>
  event('bounced', recipient, '2026-11-24T10:00:02.000Z', {
    detail: 'Permanent: General: smtp; 550 5.1.1 user unknown',
    bounce: { type: 'Permanent', subType: 'General' },
  });

async function run(events: DeliveryEvent[]) {
  const emails = new MemoryEmails(recipientsOf(emailContent({ to: [a, b], cc: [c] })));
  let changes = 0;
  for (const e of events)
    if ((await recordDeliveryEvent({ emails: emails as never }, e)).statusChanged) changes++;
  return {
    changes,
    status: emails.status,
    reason: emails.reason,
    last_event: lastEventOf(emails.marks()),
    recipients: recipientOutcomes(emails.recipients, [...emails.events.values()], {
      status: emails.status,
      sentAt: emails.sentAt ?? null,
    }).map((r) => [r.email, r.kind, r.status, r.last_event]),
  };
}

describe('settling an email with three recipients, over every order of its events', () => {
  it('one bounced, one delayed then delivered, one delivered then complaining, a duplicate: bounced, always', async () => {
    const events = [
      event('delivered', a, '2026-11-24T10:00:01.000Z'),
      bounceOf(b),
      event('delayed', c, '2026-11-24T10:00:03.000Z'),
      event('delivered', c, '2026-11-24T10:05:00.000Z'),
      event('complained', a, '2026-11-24T11:00:00.000Z'),
      bounceOf(b),
    ];
    let orders = 0;
    for (const order of permutations(events)) {
      orders++;
      expect(await run(order)).toEqual({
        changes: 1,
        status: 'bounced',
        reason: lostReason({ total: 3, done: 3, lost: 1 }),
        last_event: 'complained',
        recipients: [
          [a, 'to', 'complained', 'complained'],
          [b, 'to', 'bounced', 'bounced'],
          [c, 'cc', 'delivered', 'delivered'],
        ],
      });
    }
    expect(orders).toBe(720);
  });

  it('all three delivered (duplicates, a delay, a complaint): delivered, always; queued until the last', async () => {
    const events = [
      event('delivered', a, '2026-11-24T10:00:01.000Z'),
      event('delivered', b, '2026-11-24T10:00:02.000Z'),
      event('delivered', b, '2026-11-24T10:00:02.000Z'),
      event('delayed', c, '2026-11-24T10:00:03.000Z'),
      event('delivered', c, '2026-11-24T10:05:00.000Z'),
      event('complained', b, '2026-11-24T11:00:00.000Z'),
    ];
    for (const order of permutations(events)) {
      const result = await run(order);
      expect(result).toMatchObject({ changes: 1, status: 'delivered', last_event: 'complained' });
      expect(result.recipients.map((r) => r[2])).toEqual(['delivered', 'complained', 'delivered']);
      // Before its last outcome the email is still queued, whatever came first.
      const lastFinal = order.findLastIndex((e) => e.type === 'delivered' && e.recipients[0] === c);
      const before = order
        .slice(0, lastFinal)
        .filter((e) => !(e.type === 'delivered' && e.recipients[0] === c));
      if (!before.some((e) => e.recipients[0] === c && e.type !== 'delayed'))
        expect((await run(before)).status).toBe('queued');
    }
  });

  it('settles a one-recipient email by its first final outcome; a late one changes nothing', async () => {
    const emails = new MemoryEmails(recipientsOf(emailContent({ to: [a] })));
    const deps = { emails: emails as never };
    expect((await recordDeliveryEvent(deps, bounceOf(a))).statusChanged).toBe(true);
    expect(
      (await recordDeliveryEvent(deps, event('delivered', a, '2026-11-24T10:09:00.000Z'))).statusChanged,
    ).toBe(false);
    expect(emails.status).toBe('bounced');
    expect(emails.reason).toContain('550 5.1.1');
  });
});

describe('counting what an event records first', () => {
  it('counts an outcome once it is recorded, even when the write that settles the email fails after it (its retry finds the outcome recorded)', async () => {
    const emails = new MemoryEmails(recipientsOf(emailContent({ to: [a, b] })));
    const counted: Record<string, number>[] = [];
    const deps = {
      emails: emails as never,
      metrics: {
        count: async (_domain: string, counts: Record<string, number>) => void counted.push(counts),
      },
    };
    await recordDeliveryEvent(deps, bounceOf(a));
    // The last recipient's outcome (the email's first delivery) is recorded, then the write that
    // settles the email throws.
    const finish = emails.finish.bind(emails);
    emails.finish = async () => {
      throw Object.assign(new Error('Throughput exceeds the table'), { name: 'ThrottlingException' });
    };
    await expect(
      recordDeliveryEvent(deps, event('delivered', b, '2026-11-24T10:01:00.000Z')),
    ).rejects.toThrow(/Throughput/);
    emails.finish = finish;
    await recordDeliveryEvent(deps, event('delivered', b, '2026-11-24T10:01:00.000Z'));
    expect(emails.status).toBe('bounced');
    expect(counted.filter((c) => c.delivered)).toEqual([{ delivered: 1 }]);
  });
});

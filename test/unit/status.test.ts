import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DeliveryEventType,
  type EmailStatus,
  type EventMarks,
  LAST_EVENTS,
  lastEventOf,
  statusForEvent,
} from '../../functions/emails/status.js';

describe('email status rules', () => {
  it('maps final events to statuses and leaves the others alone', () => {
    expect(statusForEvent('delivered')).toBe('delivered');
    expect(statusForEvent('bounced')).toBe('bounced');
    expect(statusForEvent('failed')).toBe('failed');
    expect(statusForEvent('delayed')).toBeUndefined();
    expect(statusForEvent('complained')).toBeUndefined();
  });
});

/** What the repository records per event (see EmailRepository.markSent and finish). */
function apply(marks: EventMarks, type: DeliveryEventType): EventMarks {
  const next = { ...marks, sent: true };
  const final = statusForEvent(type);
  if (final && marks.status === 'queued') next.status = final;
  if (type === 'delayed') next.delayed = true;
  if (type === 'complained') next.complained = true;
  if (type === 'opened') next.opened = true;
  if (type === 'clicked') next.clicked = true;
  return next;
}
const start: EventMarks = { status: 'queued', sent: false, delayed: false, complained: false };

describe('last_event', () => {
  it('follows the email: queued, sent, delivery_delayed, then the final event, then a complaint', () => {
    const seen = [lastEventOf(start)];
    let marks = start;
    for (const type of ['sent', 'delayed', 'delivered', 'complained'] as const) {
      marks = apply(marks, type);
      seen.push(lastEventOf(marks));
    }
    expect(seen).toEqual(['queued', 'sent', 'delivery_delayed', 'delivered', 'complained']);
    expect(lastEventOf({ ...start, status: 'failed' })).toBe('failed');
    expect(lastEventOf({ ...start, status: 'bounced', sent: true, delayed: true })).toBe('bounced');
  });

  it('never goes back: a late delivery_delayed or Send event after delivered changes nothing', () => {
    let marks = apply(apply(start, 'delivered'), 'delayed');
    marks = apply(marks, 'sent');
    expect(lastEventOf(marks)).toBe('delivered');
  });

  it('is the same whatever order, however duplicated, the events of one email arrive in', () => {
    const rank = (event: string) => LAST_EVENTS.indexOf(event as never);
    const final = fc.constantFrom<DeliveryEventType>('delivered', 'bounced', 'failed');
    fc.assert(
      fc.property(
        final,
        fc.array(fc.constantFrom<DeliveryEventType>('sent', 'delayed', 'complained', 'opened', 'clicked'), {
          maxLength: 6,
        }),
        fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
        (finalType, others, order) => {
          // One final outcome (what SES reports for one email), duplicated, among the others.
          const events = [finalType, finalType, ...others];
          const shuffled = events
            .map((event, i) => ({ event, key: order[i % order.length] ?? 0, i }))
            .sort((a, b) => a.key - b.key || a.i - b.i)
            .map((entry) => entry.event);
          const inOrder = events.reduce(apply, start);
          const anyOrder = shuffled.reduce(apply, start);
          expect(lastEventOf(anyOrder)).toBe(lastEventOf(inOrder));
          // The latest meaningful event: the highest of what happened.
          const happened = events.map((e) => (e === 'delayed' ? 'delivery_delayed' : e));
          expect(lastEventOf(anyOrder)).toBe(happened.reduce((a, b) => (rank(b) > rank(a) ? b : a)));
        },
      ),
    );
  });

  it('puts opened and clicked after delivered and before complained, in any order, duplicated', () => {
    const rank = (event: string) => LAST_EVENTS.indexOf(event as never);
    expect(rank('delivered')).toBeLessThan(rank('opened'));
    expect(rank('opened')).toBeLessThan(rank('clicked'));
    expect(rank('clicked')).toBeLessThan(rank('complained'));
    const news = ['sent', 'delayed', 'delivered', 'opened', 'clicked'] as const;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<DeliveryEventType>(...news, 'complained'), { minLength: 1, maxLength: 10 }),
        fc.boolean(),
        (events, settled) => {
          // While some recipient is still open (not settled), or once delivered to all.
          let marks = settled ? { ...start, status: 'delivered' as const } : start;
          for (const type of events) marks = apply(marks, type === 'delivered' ? 'sent' : type);
          if (events.includes('delivered')) marks = { ...marks, delivered: true };
          const expected = events.includes('complained')
            ? 'complained'
            : events.includes('clicked')
              ? 'clicked'
              : events.includes('opened')
                ? 'opened'
                : events.includes('delivered') || settled
                  ? 'delivered'
                  : events.includes('delayed')
                    ? 'delivery_delayed'
                    : 'sent';
          expect(lastEventOf(marks)).toBe(expected);
          // Opens and clicks never move the status.
          expect(marks.status).toBe(settled ? 'delivered' : 'queued');
        },
      ),
    );
  });

  it('never lets an open or a click replace bounced, failed, suppressed, canceled or complained', () => {
    const engaged = [{ opened: true }, { clicked: true }, { opened: true, clicked: true }];
    const finals: [EventMarks, string][] = [
      [{ ...start, sent: true, status: 'bounced', bounced: true, delivered: true }, 'bounced'],
      [{ ...start, sent: true, bounced: true }, 'bounced'],
      [{ ...start, sent: true, status: 'failed' }, 'failed'],
      [{ ...start, status: 'bounced', suppressed: true }, 'suppressed'],
      [{ ...start, status: 'failed', scheduled: true, canceled: true }, 'canceled'],
      [{ ...start, sent: true, status: 'delivered', delivered: true, complained: true }, 'complained'],
    ];
    for (const [marks, expected] of finals)
      for (const engagement of engaged) expect(lastEventOf({ ...marks, ...engagement })).toBe(expected);
    // A delivered email with a suppressed recipient (settled bounced): its delivery's news, then the open.
    const partly = { ...start, sent: true, status: 'bounced' as const, suppressed: true, delivered: true };
    expect(lastEventOf(partly)).toBe('delivered');
    expect(lastEventOf({ ...partly, opened: true })).toBe('opened');
  });

  it('keeps the spec status among its four values', () => {
    const statuses: EmailStatus[] = ['queued', 'delivered', 'bounced', 'failed'];
    for (const status of statuses) expect(LAST_EVENTS).toContain(lastEventOf({ ...start, status }));
  });
});

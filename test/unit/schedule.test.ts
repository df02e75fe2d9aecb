import { beforeAll, describe, expect, it } from 'vitest';
import { sendEmailSchema } from '../../functions/emails/email.js';
import {
  delaySecondsUntil,
  dueJob,
  loadScheduleReader,
  MAX_SCHEDULE_MS,
  parseScheduledAt,
} from '../../functions/emails/schedule.js';
import { lastEventOf } from '../../functions/emails/status.js';
import type { ApiError } from '../../functions/shared/errors.js';

// Times in words are read by a module loaded on first use (handlers load it; these call the parser).
beforeAll(() => loadScheduleReader('in 1 hour'));

// A Tuesday, in November (New York is on EST, UTC−5; Paris on CET, UTC+1).
const now = new Date('2026-11-24T10:00:00.000Z');
const parse = (text: string) => parseScheduledAt(text, now);
const refusal = (text: string): ApiError => {
  try {
    parse(text);
  } catch (error) {
    return error as ApiError;
  }
  throw new Error(`"${text}" was accepted`);
};

describe('scheduled_at: what each form means, relative to the request', () => {
  it.each([
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T09:00:00.250Z', '2026-12-01T09:00:00.250Z'],
    ['2026-12-01T11:00:00+02:00', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T04:00:00-0500', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01 09:00:00Z', '2026-12-01T09:00:00.000Z'],
    ['in 1 min', '2026-11-24T10:01:00.000Z'],
    ['in 1 minute', '2026-11-24T10:01:00.000Z'],
    ['in 2 hours', '2026-11-24T12:00:00.000Z'],
    ['in an hour', '2026-11-24T11:00:00.000Z'],
    ['in 2 days', '2026-11-26T10:00:00.000Z'], // keeps the time of day
    ['tomorrow at 9am', '2026-11-25T09:00:00.000Z'], // UTC: the text names no zone
    ['Friday at 3pm ET', '2026-11-27T20:00:00.000Z'], // ET is EST in November
    ['Friday at 3pm', '2026-11-27T15:00:00.000Z'],
    ['next friday 9am', '2026-12-04T09:00:00.000Z'],
    ['9am CET tomorrow', '2026-11-25T08:00:00.000Z'],
    ['at noon', '2026-11-24T12:00:00.000Z'],
    ['  in 1 min  ', '2026-11-24T10:01:00.000Z'],
  ])('%s → %s', (text, expected) => {
    expect(parse(text)).toBe(expected);
  });

  it('takes exactly 30 days ahead, and refuses a millisecond more', () => {
    const edge = new Date(now.getTime() + MAX_SCHEDULE_MS).toISOString();
    expect(parse(edge)).toBe(edge);
    expect(parse('in 30 days')).toBe(edge);
    const over = new Date(now.getTime() + MAX_SCHEDULE_MS + 1).toISOString();
    expect(refusal(over).message).toMatch(/at most 30 days ahead \(until 2026-12-24T10:00:00.000Z\)/);
    expect(refusal('in 31 days').message).toContain('"in 31 days" is 2026-12-25T10:00:00.000Z');
  });

  it('takes the request time itself, and refuses anything before it, saying what it understood', () => {
    expect(parse(now.toISOString())).toBe(now.toISOString());
    const past = refusal('2026-11-24T09:59:59.999Z');
    expect(past.statusCode).toBe(400);
    expect(past.errorName).toBe('validation_error');
    expect(past.fieldErrors).toEqual([
      { field: 'scheduled_at', message: expect.stringContaining('in the past') },
    ]);
    expect(refusal('yesterday at 9am').message).toContain(
      '"yesterday at 9am" is 2026-11-23T09:00:00.000Z, and it is now 2026-11-24T10:00:00.000Z',
    );
  });

  it.each([
    ['', /must be a time/],
    ['soonish', /not a time this service can read \(got "soonish"\)/],
    [
      'tomorrow at 9am please',
      /understood only in part: "tomorrow at 9am" is 2026-11-25T09:00:00.000Z, but not "please"/,
    ],
    ['in 1 min or tomorrow at 5pm', /names more than one time/],
    ['tomorrow', /names a day but no time of day \("tomorrow"\); add one, for example "tomorrow at 9am"/],
    ['Friday', /names a day but no time of day/],
    ['2026-12-01', /names a day but no time of day/],
    ['2026-12-01T09:00', /names no time zone \(got "2026-12-01T09:00"\): add Z for UTC or an offset/],
    ['2026-12-01 09:00:00', /names no time zone/],
    ['3/4 at 9am', /reads two ways \("3\/4": month\/day or day\/month\)/],
    ['11/12 at 9am', /reads two ways/],
    ['2026-02-30T09:00:00Z', /not a valid time/],
    ['2026-12-01T25:00:00Z', /not a valid time/],
    ['x'.repeat(201), /at most 200 characters/],
  ])('refuses %j', (text, message) => {
    const error = refusal(text);
    expect(error.statusCode).toBe(400);
    expect(error.message).toMatch(message);
  });

  it.each([
    // Around the change to summer time (Sunday 2026-03-08 in New York, 2026-03-29 in Paris):
    // the offset is the one on the day the text names, whatever day it is read on.
    ['2026-03-06T12:00:00Z', 'Monday at 9am ET', '2026-03-09T13:00:00.000Z'], // EDT
    ['2026-03-09T12:00:00Z', 'Friday at 3pm ET', '2026-03-13T19:00:00.000Z'], // EDT (a week on)
    ['2026-03-04T12:00:00Z', 'Saturday at 3pm ET', '2026-03-07T20:00:00.000Z'], // still EST
    ['2026-03-27T12:00:00Z', 'Monday at 9am CET', '2026-03-30T07:00:00.000Z'], // CEST
    ['2026-03-09T12:00:00Z', 'Friday at 3pm PT', '2026-03-13T22:00:00.000Z'], // PDT
    // …and back to winter time (Sunday 2026-11-01 in New York).
    ['2026-10-28T12:00:00Z', 'Monday at 3pm ET', '2026-11-02T20:00:00.000Z'], // EST
    ['2026-10-30T12:00:00Z', 'Saturday at 3pm ET', '2026-10-31T19:00:00.000Z'], // still EDT
    // Fixed names mean what they say, whatever the season.
    ['2026-07-01T12:00:00Z', 'tomorrow at 9am EST', '2026-07-02T14:00:00.000Z'],
  ])('at %s, %j is %s', (at, text, expected) => {
    expect(parseScheduledAt(text, new Date(at))).toBe(expected);
  });

  it.each([
    // 22:30 in New York (03:30 UTC the next day): its days, not UTC's.
    ['2026-11-26T03:30:00Z', 'tomorrow at 9am ET', '2026-11-26T14:00:00.000Z'],
    ['2026-11-26T03:30:00Z', 'today at 11pm ET', '2026-11-26T04:00:00.000Z'],
    ['2026-11-26T03:30:00Z', 'tomorrow at 9am EST', '2026-11-26T14:00:00.000Z'],
    ['2026-11-26T03:30:00Z', 'Thursday at 8am PT', '2026-11-26T16:00:00.000Z'], // Thursday the 26th, there
    // Without a zone, the days are UTC's.
    ['2026-11-26T03:30:00Z', 'tomorrow at 9am', '2026-11-27T09:00:00.000Z'],
  ])('at %s, %j is %s (days are the named zone’s, or UTC’s)', (at, text, expected) => {
    expect(parseScheduledAt(text, new Date(at))).toBe(expected);
  });

  it('names the field it was given (a batch names the email)', () => {
    expect(() => parseScheduledAt('soonish', now, '3.scheduled_at')).toThrow(
      expect.objectContaining({ fieldErrors: [expect.objectContaining({ field: '3.scheduled_at' })] }),
    );
  });

  it('is a string in the send schema (read later, against the clock)', () => {
    const base = { from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't' };
    expect(sendEmailSchema.safeParse({ ...base, scheduled_at: 'in 1 min' }).success).toBe(true);
    expect(sendEmailSchema.safeParse({ ...base, scheduled_at: 1234 }).success).toBe(false);
  });
});

describe('a scheduled email on the queue', () => {
  it('is held until its time, rounded up to a second, at most SQS’s 15 minutes', () => {
    const t = now.getTime();
    expect(delaySecondsUntil(t + 1_200, t)).toBe(2);
    expect(delaySecondsUntil(t + 1_000, t)).toBe(1);
    expect(delaySecondsUntil(t - 5_000, t)).toBe(0);
    expect(delaySecondsUntil(t + 3_600_000, t)).toBe(900);
  });

  it('travels as a reference with the key that scheduled it', () => {
    expect(
      dueJob(
        { id: 'em_1', key_id: 'key_1', scheduled_at: new Date(now.getTime() + 30_000).toISOString() },
        now.getTime(),
      ),
    ).toEqual({ id: 'em_1', content: null, key_id: 'key_1', delaySeconds: 30 });
  });
});

describe('last_event of a scheduled email', () => {
  const marks = { status: 'queued' as const, sent: false, delayed: false, complained: false };
  it('is scheduled while it waits, then follows its news; canceled when canceled', () => {
    expect(lastEventOf({ ...marks, scheduled: true })).toBe('scheduled');
    expect(lastEventOf({ ...marks, scheduled: true, sent: true })).toBe('sent');
    expect(lastEventOf({ ...marks, scheduled: true, status: 'delivered', sent: true, delivered: true })).toBe(
      'delivered',
    );
    expect(lastEventOf({ ...marks, scheduled: true, status: 'failed', canceled: true })).toBe('canceled');
    expect(lastEventOf({ ...marks, scheduled: true, status: 'failed' })).toBe('failed');
    expect(lastEventOf(marks)).toBe('queued');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { Broadcast } from '../../console/src/answers.js';
import {
  actionsOf,
  cancelQuestion,
  createBody,
  emptyForm,
  formOf,
  localInputOf,
  problemsOf,
  progressOf,
  progressWords,
  refreshMsOf,
  STATUS_MEANS,
  scheduleIso,
  totalsCards,
  updateBody,
  waitingWords,
} from '../../console/src/broadcast-form.js';
import { BROADCAST_STATUSES } from '../../functions/broadcasts/broadcast.js';

/**
 * The Broadcasts page's logic (console/src/broadcast-form.ts): what the compose form sends, a
 * schedule picked in the browser's zone as the ISO UTC time the API takes, the statuses and waits
 * in words, how far a send has come, and how often the page asks again.
 */
const SAVED: Broadcast = {
  object: 'broadcast',
  id: '0193c4a2-8b1e-7d3c-9a4f-2b6e8c1d0f01',
  name: 'November news',
  segment_id: 'seg-1',
  topic_id: 'top-1',
  status: 'draft',
  created_at: '2026-11-28T08:00:00.000Z',
  scheduled_at: null,
  sent_at: null,
  from: 'News <news@acme.test>',
  subject: 'Hello {{{contact.first_name|there}}}',
  reply_to: ['help@acme.test'],
  preview_text: 'What is new',
  html: '<p>Hi {{{FIRST_NAME|there}}}</p>',
  text: null,
};

const TOTALS = {
  sent: 90,
  delivered: 80,
  opened: 50,
  unique_opened: 40,
  clicked: 12,
  unique_clicked: 10,
  bounced: 4,
  complained: 1,
  unsubscribed: 2,
  suppressed: 3,
  ended: 5,
};

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe('the compose form', () => {
  it('creates a draft with only the fields given, trimmed (the bodies as typed), reply-to as a list', () => {
    const body = createBody({
      ...emptyForm(),
      segment_id: 'seg-1',
      from: ' News <news@acme.test> ',
      subject: 'Hi',
      reply_to: 'a@acme.test, b@acme.test\n',
      html: '  <p>Hi</p>\n',
    });
    expect(body).toEqual({
      segment_id: 'seg-1',
      from: 'News <news@acme.test>',
      subject: 'Hi',
      reply_to: ['a@acme.test', 'b@acme.test'],
      html: '  <p>Hi</p>\n',
    });
  });

  it('updates a draft with the changed fields only, an emptied one as null', () => {
    const form = formOf(SAVED);
    expect(updateBody(form, SAVED)).toEqual({});
    expect(
      updateBody({ ...form, subject: 'Hello again', topic_id: '', preview_text: ' ', reply_to: '' }, SAVED),
    ).toEqual({ subject: 'Hello again', topic_id: null, preview_text: null, reply_to: [] });
    // The deprecated audience_id is the segment when segment_id is absent.
    expect(formOf({ ...SAVED, segment_id: null, audience_id: 'aud-1' }).segment_id).toBe('aud-1');
  });

  it('says what the form lacks before saving', () => {
    expect(problemsOf(emptyForm())).toEqual([
      'Choose the segment it goes to.',
      'Say who it is from.',
      'Give it a subject.',
      'Write its HTML, its text, or both.',
    ]);
    expect(problemsOf(formOf(SAVED))).toEqual([]);
    expect(problemsOf({ ...formOf(SAVED), html: ' ', text: 'Hi' })).toEqual([]);
  });
});

describe('a schedule picked in the browser', () => {
  const now = new Date('2026-11-28T12:00:00.000Z');

  it("is the browser's local time, sent as ISO UTC (the API refuses a time without a zone)", () => {
    process.env.TZ = 'America/New_York';
    expect(scheduleIso('2026-12-01T09:30', now)).toEqual({ iso: '2026-12-01T14:30:00.000Z' });
    process.env.TZ = 'Asia/Tokyo';
    expect(scheduleIso('2026-12-01T09:30', now)).toEqual({ iso: '2026-12-01T00:30:00.000Z' });
    process.env.TZ = 'UTC';
    expect(scheduleIso('2026-12-01T09:30:15', now)).toEqual({ iso: '2026-12-01T09:30:15.000Z' });
  });

  it('starts the picker at a time it reads back the same, in any zone', () => {
    for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
      process.env.TZ = tz;
      const at = new Date('2026-11-28T13:07:00.000Z');
      expect(scheduleIso(localInputOf(at), now), tz).toEqual({ iso: at.toISOString() });
    }
  });

  it('is refused in words when empty, not a time, past, or more than 30 days ahead', () => {
    process.env.TZ = 'UTC';
    expect(scheduleIso('', now).problem).toBe('Pick the date and time to send it at.');
    expect(scheduleIso('tomorrow', now).problem).toBe('"tomorrow" is not a date and time.');
    expect(scheduleIso('2026-02-30T10:00', now).problem).toBe('"2026-02-30T10:00" is not a date and time.');
    expect(scheduleIso('2026-11-28T11:59', now).problem).toBe('That time is past: pick a later one.');
    expect(scheduleIso('2026-12-29T12:00', now).problem).toBe(
      'A broadcast may be scheduled at most 30 days ahead.',
    );
    expect(scheduleIso('2026-12-28T12:00', now)).toEqual({ iso: '2026-12-28T12:00:00.000Z' });
  });
});

describe('the statuses', () => {
  it('are each said in words, and each allows what the API allows', () => {
    for (const status of BROADCAST_STATUSES) expect(STATUS_MEANS[status], status).toMatch(/\w/);
    expect(actionsOf('draft')).toEqual({
      edit: true,
      send: true,
      cancel: false,
      remove: true,
      duplicate: true,
    });
    expect(actionsOf('scheduled')).toMatchObject({ edit: false, send: false, cancel: true, remove: true });
    expect(actionsOf('queued')).toMatchObject({ send: false, cancel: true, remove: false });
    expect(actionsOf('sending')).toMatchObject({ send: false, cancel: true, remove: false });
    for (const status of ['sent', 'canceled'] as const)
      expect(actionsOf(status), status).toEqual({
        edit: false,
        send: false,
        cancel: false,
        remove: false,
        duplicate: true,
      });
  });

  it('say what canceling does: a scheduled one becomes a draft again, a sending one is canceled for good', () => {
    expect(cancelQuestion('scheduled')).toContain('It becomes a draft again: nothing is sent');
    for (const status of ['queued', 'sending'] as const)
      expect(cancelQuestion(status), status).toContain('It cannot be sent again: duplicate it instead.');
  });

  it('are asked again often while sending, now and then while scheduled, never when settled', () => {
    expect(refreshMsOf('queued')).toBe(3000);
    expect(refreshMsOf('sending')).toBe(3000);
    expect(refreshMsOf('scheduled')).toBe(15_000);
    for (const status of ['draft', 'sent', 'canceled', undefined] as const)
      expect(refreshMsOf(status), status).toBeUndefined();
  });

  it('say why a broadcast waits', () => {
    expect(waitingWords(undefined)).toBe('');
    expect(
      waitingWords({
        reason: 'quota',
        detail: '120 of 200 left, 500 to send',
        since: '2026-11-28T12:00:00Z',
      }),
    ).toBe(
      "Waiting for SES's 24-hour sending quota: it goes on by itself as the quota frees up. 120 of 200 left, 500 to send.",
    );
    expect(waitingWords({ reason: 'paused', detail: '', since: '2026-11-28T12:00:00Z' })).toBe(
      'Waiting: sending is paused for the account, and it goes on once sending resumes.',
    );
  });
});

describe('the progress of a send', () => {
  const sending: Broadcast = {
    ...SAVED,
    status: 'sending',
    progress: { created: 100, skipped: { unsubscribed: 2, opted_out: 1 }, done: false },
    totals: TOTALS,
  };

  it('counts the emails handed to SES or ended (sent, suppressed, ended) of those made', () => {
    expect(progressOf(sending)).toEqual({ created: 100, handled: 98, skipped: 3, percent: 98, done: false });
    // Never more than made (a total counted before the checkpoint).
    expect(progressOf({ ...sending, totals: { ...TOTALS, sent: 200 } }).handled).toBe(100);
    expect(progressOf({ ...sending, progress: null, totals: null })).toEqual({
      created: 0,
      handled: 0,
      skipped: 0,
      percent: 0,
      done: false,
    });
  });

  it('is said in one sentence', () => {
    expect(progressWords(sending)).toBe(
      '100 emails made so far; 98 handed to SES or ended. 3 contacts left out (2 unsubscribed, 1 opted out of the topic).',
    );
    expect(
      progressWords({
        ...sending,
        status: 'sent',
        progress: { created: 1, skipped: { unsubscribed: 0, opted_out: 0 }, done: true },
      }),
    ).toBe('1 email made, one per contact; 1 handed to SES or ended.');
    expect(progressWords({ ...sending, status: 'queued', progress: undefined })).toBe('No email made yet.');
    // Without totals, nothing is said of the handover (not a false "0 handed").
    expect(progressWords({ ...sending, totals: undefined })).toBe(
      '100 emails made so far. 3 contacts left out (2 unsubscribed, 1 opted out of the topic).',
    );
    expect(progressWords({ ...sending, status: 'scheduled' })).toBe('Not begun.');
  });

  it('shows the totals, opens and clicks unique with their share of those delivered', () => {
    const cards = Object.fromEntries(totalsCards(TOTALS).map((c) => [c.label, c]));
    expect(Object.keys(cards)).toEqual([
      'Sent',
      'Delivered',
      'Opened',
      'Clicked',
      'Bounced',
      'Complained',
      'Unsubscribed',
      'Suppressed',
    ]);
    expect(cards.Opened).toEqual({ label: 'Opened', value: 40, note: '50.0% of 80; 50 opens in all' });
    expect(cards.Clicked?.value).toBe(10);
    expect(cards.Delivered?.note).toBe('88.9% of 90');
    expect(totalsCards({ ...TOTALS, sent: 0, delivered: 0 })[1]?.note).toBe('');
  });
});

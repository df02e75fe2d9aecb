/**
 * The official resend SDK (6.38) keeps broadcasts against `npm start`, unchanged: create (a draft;
 * by the deprecated `audienceId`; scheduled or sent at once with `send: true`), get, list in pages,
 * update, duplicate, send with `scheduledAt`, cancel and remove, and our preview through the SDK's
 * own `post`. Each answer fits Resend's schema (the contract check records every answer too:
 * test/support/contract.ts). The program: test/e2e/sdk/broadcasts-user.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ service, seen, stop } = await runSdkProgram('test/e2e/sdk/broadcasts-user.ts'));
}, 150_000);
afterAll(() => stop?.());

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The SDK's data of a call, failing with its error when there is none. */
const data = (name: string) => {
  const answer = seen[name];
  expect(answer?.error ?? null, name).toBeNull();
  return answer.data;
};
/** The SDK's error of a call that must fail, with its status. */
const failure = (name: string, status: number) => {
  const error = seen[name]?.error;
  expect(error, name).toBeTruthy();
  expect(error.statusCode, `${name}: ${JSON.stringify(error)}`).toBe(status);
  return error as { statusCode: number; name: string; message: string };
};

describe('the official resend SDK keeps broadcasts on npm start', () => {
  it('runs against the local service', () => {
    expect(service.baseUrl).toMatch(/^https:\/\/localhost:\d+\/v1$/);
  });

  it("broadcasts.create makes a draft, read back in Resend's shape; audienceId names the segment too", () => {
    expectResendShape(data('created'), 'CreateBroadcastResponseSuccess');
    expect(data('created')).toEqual({ object: 'broadcast', id: expect.stringMatching(UUID_V7) });
    expectResendShape(data('draft'), 'GetBroadcastResponseSuccess');
    expect(data('draft')).toMatchObject({
      object: 'broadcast',
      id: data('created').id,
      name: 'November',
      segment_id: seen.ids.segment,
      audience_id: seen.ids.segment,
      topic_id: seen.ids.topic,
      from: 'News <news@news.test>',
      reply_to: ['help@news.test'],
      preview_text: 'Three things',
      status: 'draft',
      progress: null,
      waiting: null,
    });
    expect(data('draft')).not.toHaveProperty('scheduled_at');
    expectResendShape(data('byAudience'), 'CreateBroadcastResponseSuccess');
  });

  it('broadcasts.list pages newest first', () => {
    expectResendShape(data('list'), 'ListBroadcastsResponseSuccess');
    expect(data('list').data.map((b: { id: string }) => b.id)).toEqual([
      data('byAudience').id,
      data('created').id,
    ]);
    expectResendShape(data('listPage'), 'ListBroadcastsResponseSuccess');
    expect(data('listPage')).toMatchObject({ has_more: true, data: [{ id: data('byAudience').id }] });
  });

  it('broadcasts.update changes a draft; a scheduled one is refused (403)', () => {
    expectResendShape(data('updated'), 'UpdateBroadcastResponseSuccess');
    expect(data('afterUpdate')).toMatchObject({
      subject: 'Hi {{{FIRST_NAME|there}}}!',
      preview_text: 'Four things',
    });
    expect(failure('updateScheduled', 403).name).toBe('validation_error');
  });

  it('broadcasts.duplicate makes a new draft with the same content', () => {
    expect(data('duplicated')).toEqual({ object: 'broadcast', id: expect.stringMatching(UUID_V7) });
    expect(data('copy')).toMatchObject({
      status: 'draft',
      name: 'November',
      subject: 'Hi {{{FIRST_NAME|there}}}!',
      topic_id: seen.ids.topic,
      html: data('afterUpdate').html,
    });
  });

  it('broadcasts.send with scheduledAt schedules it; cancel brings it back to a draft, as Resend does', () => {
    expectResendShape(data('scheduled'), 'SendBroadcastResponseSuccess');
    expectResendShape(data('whileScheduled'), 'GetBroadcastResponseSuccess');
    expect(data('whileScheduled').status).toBe('scheduled');
    const due = Date.parse(data('whileScheduled').scheduled_at);
    expect(Math.abs(due - Date.parse(data('whileScheduled').created_at) - 3_600_000)).toBeLessThan(120_000);
    expect(failure('sendTwice', 403).message).toMatch(/scheduled/);
    expectResendShape(data('canceled'), 'CancelBroadcastResponseSuccess');
    expect(data('afterCancel').status).toBe('draft');
    expect(data('afterCancel')).not.toHaveProperty('scheduled_at');
    expect(failure('cancelDraft', 403).message).toMatch(/draft/);
  });

  it('broadcasts.create with send and scheduledAt schedules it; remove deletes it, which cancels it', () => {
    expect(data('laterScheduled').status).toBe('scheduled');
    expectResendShape(data('removedScheduled'), 'RemoveBroadcastResponseSuccess');
    expect(data('removedScheduled')).toEqual({
      object: 'broadcast',
      id: data('createdScheduled').id,
      deleted: true,
    });
    expect(failure('afterRemove', 404).name).toBe('not_found');
  });

  it('broadcasts.create with send goes at once; a sent broadcast is kept; a tag naming nothing and scheduled_at without send are refused (422)', () => {
    expectResendShape(data('sentNow'), 'GetBroadcastResponseSuccess');
    expect(['queued', 'sending', 'sent']).toContain(data('sentNow').status);
    expect(failure('removeSent', 403).name).toBe('validation_error');
    expect(failure('unknownTag', 422).message).toMatch(/\{\{\{contact\.shoe_size\}\}\}/);
    expect(failure('scheduleWithoutSend', 422).message).toMatch(/send: true/);
  });

  it('our preview renders the draft for a contact, and for no one with the fallbacks', () => {
    expect(data('preview')).toEqual({
      object: 'broadcast_preview',
      contact_id: seen.ids.contact,
      email: 'ada@example.test',
      subject: 'Hi Ada!',
      html: expect.stringMatching(
        /^<p>Hi Ada, on pro\.<\/p><a href="https:\/\/localhost:\d+\/unsubscribe\/preview">/,
      ),
      text: null,
    });
    expect(data('previewNoOne')).toMatchObject({ contact_id: null, subject: 'Hi there!' });
    expect(data('previewNoOne').html).toMatch(/on free\./);
  });

  it('broadcasts.remove deletes a draft', () => {
    expectResendShape(data('removed'), 'RemoveBroadcastResponseSuccess');
    const left = data('final').data.map((b: { id: string }) => b.id);
    expect(left).not.toContain(data('created').id);
    expect(left).toContain(data('duplicated').id);
  });
});

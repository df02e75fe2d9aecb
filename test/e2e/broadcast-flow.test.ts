/**
 * A broadcast end to end through the official resend SDK (6.38) against `npm start`: a segment of
 * 200 contacts, one opted out of the broadcast's topic and one suppressed, each of the 198 others
 * getting its own message (merge tags and their fallbacks, a property, its own unsubscribe link in
 * the body and in List-Unsubscribe); recipients by type adding up, one found by its address; a
 * scheduled broadcast canceled before its time sends nothing; a duplicate; a broadcast canceled in
 * the middle of its send stops. The program: test/e2e/sdk/broadcast-flow.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ seen, stop } = await runSdkProgram('test/e2e/sdk/broadcast-flow.ts', 170_000));
}, 200_000);
afterAll(() => stop?.());

const data = (name: string) => {
  const answer = seen[name];
  expect(answer?.error ?? null, name).toBeNull();
  return answer.data;
};
const addressOf = (i: number) => `reader${String(i).padStart(3, '0')}@example.test`;
interface Message {
  to: string[];
  subject: string;
  html: string;
  text: string;
  headers: { name: string; value: string }[];
}

describe('a broadcast to a segment of 200', () => {
  it('is created and ends sent, in Resend’s shapes', () => {
    expectResendShape(data('created'), 'CreateBroadcastResponseSuccess');
    expect(data('sent').status).toBe('sent');
    expectResendShape(data('sent'), 'GetBroadcastResponseSuccess');
    expectResendShape(data('listed'), 'ListBroadcastsResponseSuccess');
  });

  it('gives each of the 198 its own message: its name or the fallback, its company or the property’s fallback, its own link', () => {
    const messages = seen.messages as Message[];
    expect(messages).toHaveLength(198);
    const to = messages.map((m) => m.to[0]?.toLowerCase());
    expect(new Set(to).size).toBe(198);
    // The opted out and the suppressed get nothing.
    expect(to).not.toContain(addressOf(1));
    expect(to).not.toContain(addressOf(2));
    const byAddress = new Map(messages.map((m) => [m.to[0]?.toLowerCase(), m]));
    const five = byAddress.get(addressOf(5)) as Message;
    expect(five.subject).toBe('Hi Reader5');
    expect(five.html).toContain('Hello Reader5 of your company.');
    const ten = byAddress.get(addressOf(10)) as Message;
    expect(ten.subject).toBe('Hi there');
    expect(ten.html).toContain('Hello friend of your company.');
    expect((byAddress.get(addressOf(3)) as Message).html).toContain('of Company 3.');
    const links = messages.map((m) => /href="(https:\/\/[^"]+\/unsubscribe\/[^"]+)"/.exec(m.html)?.[1]);
    expect(links.every(Boolean)).toBe(true);
    expect(new Set(links).size).toBe(198);
    for (const m of messages) {
      const names = m.headers.map((h) => h.name.toLowerCase());
      expect(names).toContain('list-unsubscribe');
      expect(m.headers.find((h) => h.name.toLowerCase() === 'list-unsubscribe-post')?.value).toBe(
        'List-Unsubscribe=One-Click',
      );
    }
  });

  it('lists its recipients by type, adding up: 198 sent and delivered, 1 suppressed; one found by its address', () => {
    for (const type of ['sent', 'delivered', 'suppressed', 'unsubscribed', 'bounced'])
      expectResendShape(data(`recipients_${type}`), 'ListBroadcastRecipientsResponseSuccess');
    expect(seen.all_sent).toHaveLength(198);
    expect(seen.all_delivered).toHaveLength(198);
    expect(seen.all_suppressed.map((r: { email: string }) => r.email)).toEqual([addressOf(2)]);
    expect(seen.all_unsubscribed).toHaveLength(0);
    expect(seen.all_bounced).toHaveLength(0);
    const filtered = data('filtered').data as { email: string; contact_id: string }[];
    expect(filtered.map((r) => r.email)).toEqual([addressOf(5)]);
    expect(filtered[0]?.contact_id).toBe(seen.ids.contacts[5]);
    // The opted out is no recipient of any type; the broadcast's own counts say why.
    expect(data('sent').progress).toMatchObject({ created: 199, skipped: { opted_out: 1 }, done: true });
  });
});

describe('scheduling, duplicating and canceling', () => {
  it('cancels a scheduled broadcast before its time (back to a draft, as Resend does), and nothing is sent', () => {
    expect(data('scheduledRead').status).toBe('scheduled');
    expectResendShape(data('canceled'), 'CancelBroadcastResponseSuccess');
    expect(data('canceledRead').status).toBe('draft');
    expect(seen.sentAfterCancel).toBe(0);
  });

  it('duplicates a broadcast into a draft with its content', () => {
    expect(data('copy')).toMatchObject({
      status: 'draft',
      subject: 'Hi {{{contact.first_name|there}}}',
      segment_id: seen.ids.segment,
      topic_id: seen.ids.topic,
    });
    expect(data('copy').id).not.toBe(seen.ids.broadcast);
  });

  it('stops a broadcast canceled in the middle of its send', () => {
    expect(data('midRead').status).toBe('canceled');
    expect(seen.mid.atCancel).toBeGreaterThanOrEqual(10);
    // What SES already had is sent; at most a few in flight at the cancel follow; the rest never go.
    expect(seen.mid.after).toBeLessThan(200);
    expect(seen.mid.after - seen.mid.atCancel).toBeLessThanOrEqual(20);
  });
});

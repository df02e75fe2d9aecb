/**
 * A user's program with the official `resend` package (RESEND_BASE_URL points it at `npm start`)
 * that broadcasts to a segment of 200 contacts: one opted out of the broadcast's topic, one on the
 * suppression list, the rest personal to each (merge tags with fallbacks, a property, their own
 * unsubscribe link). Then a scheduled broadcast canceled before its time, a duplicate, and a
 * broadcast canceled in the middle of its send. Every call's `{data, error}` is kept, with what the
 * local SES holds, so the test reads what happened. Run by test/e2e/broadcast-flow.test.ts; prints
 * one JSON line.
 */
import { Resend } from 'resend';
import { must, type Result } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const storeUrl = process.env.SES_STORE_URL as string;
const baseUrl = process.env.RESEND_BASE_URL as string;
const seen: Record<string, unknown> = {};
const keep = async <T>(name: string, call: Promise<Result<T>>): Promise<Result<T>> => {
  const result = await call;
  seen[name] = { data: result.data, error: result.error };
  return result;
};
/** Reads until `done`, or fails loudly after `ms` with the last value. */
const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 60_000) => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};
interface Stored {
  destination: { to: string[] };
  subject: string;
  body: { html?: string; text?: string };
  headers?: { name: string; value: string }[];
  at: number;
}
const stored = async () => ((await (await fetch(storeUrl)).json()) as { emails: Stored[] }).emails;
const FROM = 'News <news@flow.test>';

// A verified sending domain.
const domain = must(await resend.domains.create({ name: 'flow.test' }), 'domains.create');
await resend.domains.verify(domain.id);
await until(
  async () => must(await resend.domains.get(domain.id), 'domains.get'),
  (d) => d.status === 'verified',
  'the domain to be verified',
);

// The audience: a property with a fallback, a segment, a topic everyone is in by default.
must(
  await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'your company' }),
  'contactProperties.create',
);
const segment = must(await resend.segments.create({ name: 'Everyone' }), 'segments.create');
const topic = must(
  await resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_in' }),
  'topics.create',
);
const addressOf = (i: number) => `reader${String(i).padStart(3, '0')}@example.test`;
const ids: string[] = [];
for (let start = 0; start < 200; start += 20) {
  const made = await Promise.all(
    Array.from({ length: 20 }, (_, k) => start + k).map((i) =>
      resend.contacts.create({
        email: addressOf(i),
        // Every tenth has no first name (the fallback), every third a company (else the property's fallback).
        ...(i % 10 === 0 ? {} : { firstName: `Reader${i}` }),
        ...(i % 3 === 0 ? { properties: { company: `Company ${i}` } } : {}),
        segments: [{ id: segment.id }],
      }),
    ),
  );
  for (const result of made) ids.push(must(result, 'contacts.create').id);
}
// One opts out of the topic; one address is on the suppression list.
must(
  await resend.contacts.topics.update({
    id: ids[1] as string,
    topics: [{ id: topic.id, subscription: 'opt_out' }],
  }),
  'contacts.topics.update',
);
const suppressed = await fetch(`${baseUrl}/suppressions`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.RESEND_API_KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ email: addressOf(2) }),
});
if (!suppressed.ok) throw new Error(`suppressions: ${suppressed.status} ${await suppressed.text()}`);

// The broadcast, sent at once.
const before = (await stored()).length;
const sent = must(
  await keep(
    'created',
    resend.broadcasts.create({
      name: 'November news',
      segmentId: segment.id,
      topicId: topic.id,
      from: FROM,
      subject: 'Hi {{{contact.first_name|there}}}',
      html: '<p>Hello {{{FIRST_NAME|friend}}} of {{{contact.company}}}.</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
      text: 'Hello {{{contact.first_name|friend}}}. Unsubscribe: {{{RESEND_UNSUBSCRIBE_URL}}}',
      send: true,
    }),
  ),
  'broadcasts.create',
);
await until(
  () => resend.broadcasts.get(sent.id),
  (r) => r.data?.status === 'sent',
  'the broadcast to be sent',
  90_000,
);
await keep('sent', resend.broadcasts.get(sent.id));
const messages = await until(
  async () => (await stored()).slice(before),
  (m) => m.length >= 198,
  '198 messages in the local SES',
);
seen.messages = messages.map((m) => ({
  to: m.destination.to,
  subject: m.subject,
  html: m.body.html,
  text: m.body.text,
  headers: m.headers ?? [],
}));
// Every recipient type, and one filtered by an address.
for (const type of ['sent', 'delivered', 'suppressed', 'unsubscribed', 'bounced'] as const) {
  const pages: unknown[] = [];
  let after: string | undefined;
  for (;;) {
    const page = must(
      await keep(
        `recipients_${type}`,
        resend.broadcasts.recipients(sent.id, { type, limit: 100, ...(after ? { after } : {}) }),
      ),
      `recipients ${type}`,
    ) as { data: { id: string }[]; has_more: boolean };
    pages.push(...page.data);
    if (!page.has_more) break;
    after = page.data.at(-1)?.id;
  }
  seen[`all_${type}`] = pages;
}
await until(
  () => resend.broadcasts.recipients(sent.id, { type: 'delivered', limit: 100 }),
  (r) => (r.data?.data.length ?? 0) > 0,
  'delivered recipients',
);
await keep('filtered', resend.broadcasts.recipients(sent.id, { type: 'delivered', email: addressOf(5) }));
await keep('listed', resend.broadcasts.list());

// A scheduled one, canceled before its time: nothing is sent.
const later = must(
  await keep(
    'scheduled',
    resend.broadcasts.create({
      name: 'Later',
      segmentId: segment.id,
      from: FROM,
      subject: 'Later',
      text: 'later',
      send: true,
      scheduledAt: new Date(Date.now() + 4_000).toISOString(),
    }),
  ),
  'broadcasts.create scheduled',
);
await keep('scheduledRead', resend.broadcasts.get(later.id));
await keep('canceled', resend.broadcasts.cancel(later.id));
const afterScheduled = (await stored()).length;
await new Promise((resolve) => setTimeout(resolve, 8_000));
seen.sentAfterCancel = (await stored()).length - afterScheduled;
await keep('canceledRead', resend.broadcasts.get(later.id));

// A duplicate: a new draft with the same content.
const copy = must(await keep('duplicated', resend.broadcasts.duplicate(sent.id)), 'broadcasts.duplicate');
await keep('copy', resend.broadcasts.get(copy.id));

// A broadcast canceled in the middle of its send.
const midBefore = (await stored()).length;
const mid = must(
  await resend.broadcasts.create({
    name: 'Stopped',
    segmentId: segment.id,
    from: FROM,
    subject: 'Stopped {{{contact.first_name|}}}',
    text: 'x',
    send: true,
  }),
  'broadcasts.create mid',
);
await until(stored, (m) => m.length - midBefore >= 10, 'the first messages of the second broadcast');
await keep('midCanceled', resend.broadcasts.cancel(mid.id));
const midAtCancel = (await stored()).length - midBefore;
await new Promise((resolve) => setTimeout(resolve, 5_000));
seen.mid = { atCancel: midAtCancel, after: (await stored()).length - midBefore };
await keep('midRead', resend.broadcasts.get(mid.id));

seen.ids = { broadcast: sent.id, segment: segment.id, topic: topic.id, contacts: ids, mid: mid.id };
console.log(JSON.stringify(seen));

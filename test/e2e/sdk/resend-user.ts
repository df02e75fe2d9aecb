/**
 * What a user's code does with the official `resend` package, pointed at this service by
 * RESEND_BASE_URL (and trusting the local certificate through NODE_EXTRA_CA_CERTS). Run by
 * test/e2e/resend-sdk.test.ts in its own process, as a user's program would run; prints one JSON
 * line with what it saw. Nothing here knows about the service beyond Resend's API.
 */
import { Resend } from 'resend';

const resend = new Resend(process.env.RESEND_API_KEY);
const seen: Record<string, unknown> = {};

type Result<T> = { data: T | null; error: unknown };
const must = <T>(result: Result<T>, what: string): T => {
  if (result.error || !result.data) throw new Error(`${what}: ${JSON.stringify(result.error)}`);
  return result.data;
};
const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

// A sending domain: add it, ask for verification (a POST without a body), wait until verified.
const domain = must(await resend.domains.create({ name: 'sdk.test' }), 'domains.create');
seen.verify = await resend.domains.verify(domain.id);
await until(
  async () => must(await resend.domains.get(domain.id), 'domains.get'),
  (d) => d.status === 'verified',
  'the domain to be verified',
);

// One email with tags and headers, followed to delivered through last_event.
const sent = must(
  await resend.emails.send({
    from: 'SDK <hello@sdk.test>',
    to: 'success@simulator.amazonses.com',
    subject: 'From the resend SDK',
    html: '<p>Hello</p>',
    tags: [
      { name: 'category', value: 'welcome' },
      { name: 'user_id', value: 'u-42' },
    ],
    headers: { 'X-Entity-Ref-ID': 'ref-1', 'List-Unsubscribe': '<https://sdk.test/unsubscribe>' },
  }),
  'emails.send',
);
seen.delivered = await until(
  async () => must(await resend.emails.get(sent.id), 'emails.get'),
  (email) => email.last_event === 'delivered',
  'last_event delivered',
);
seen.badHeader = await resend.emails.send({
  from: 'SDK <hello@sdk.test>',
  to: 'success@simulator.amazonses.com',
  subject: 'Injected',
  text: 'x',
  headers: { 'X-Evil': 'a\r\nBcc: victim@example.com' },
});

// A batch, strict (the default) and permissive, with an idempotency key.
const batch = [
  { from: 'SDK <hello@sdk.test>', to: 'success@simulator.amazonses.com', subject: 'Batch 1', text: 'x' },
  { from: 'SDK <hello@sdk.test>', to: 'bounce@simulator.amazonses.com', subject: 'Batch 2', text: 'x' },
];
seen.batch = await resend.batch.send(batch, { idempotencyKey: 'sdk-batch-1' });
seen.batchAgain = await resend.batch.send(batch, { idempotencyKey: 'sdk-batch-1' });
seen.batchStrict = await resend.batch.send([...batch, { ...batch[0], to: 'not an address' }] as never);
seen.batchPermissive = await resend.batch.send([batch[0], { ...batch[0], to: 'not an address' }] as never, {
  batchValidation: 'permissive',
});
const batchIds = must(seen.batch as Result<{ data: { id: string }[] }>, 'batch.send').data.map((e) => e.id);
seen.batchFinal = await until(
  async () => Promise.all(batchIds.map(async (id) => must(await resend.emails.get(id), 'emails.get'))),
  (emails) => emails.every((e) => (e as { status?: string }).status !== 'queued'),
  'the batch to settle',
);

// Pages: six more emails, then every page of two with `after`, and back with `before`.
for (let i = 0; i < 6; i++)
  must(
    await resend.emails.send({
      from: 'SDK <hello@sdk.test>',
      to: 'success@simulator.amazonses.com',
      subject: `Page ${i}`,
      text: 'x',
    }),
    'emails.send',
  );
const forward: string[][] = [];
let page = must(await resend.emails.list({ limit: 2 }), 'emails.list');
forward.push(page.data.map((e) => e.id));
while (page.has_more) {
  page = must(
    await resend.emails.list({ limit: 2, after: forward.at(-1)?.at(-1) as string }),
    'emails.list after',
  );
  forward.push(page.data.map((e) => e.id));
}
seen.forward = forward;
const backward: string[][] = [];
page = must(
  await resend.emails.list({ limit: 2, before: forward.at(-1)?.at(-1) as string }),
  'emails.list before',
);
backward.push(page.data.map((e) => e.id));
while (page.has_more) {
  page = must(
    await resend.emails.list({ limit: 2, before: backward.at(-1)?.[0] as string }),
    'emails.list before',
  );
  backward.push(page.data.map((e) => e.id));
}
seen.backward = backward;
seen.bothCursors = await resend.emails.list({ limit: 2, after: sent.id, before: sent.id } as never);

// API keys: create (object api_key), rename, page through, remove.
const created = must(await resend.apiKeys.create({ name: 'sdk key' }), 'apiKeys.create');
seen.created = { ...created, token: created.token.slice(0, 4) };
seen.renamed = await resend.apiKeys.update(created.id, { name: 'sdk key, renamed' });
seen.keys = must(await resend.apiKeys.list({ limit: 100 }), 'apiKeys.list');
seen.removed = await resend.apiKeys.remove(created.id);

// Suppressions: a hard bounce puts the address on the list, and the next email to it is never
// handed to SES; the list by hand, in batches, and taken off again.
const bouncer = 'bounce+sdk@simulator.amazonses.com';
const once = must(
  await resend.emails.send({ from: 'SDK <hello@sdk.test>', to: bouncer, subject: 'Bounce once', text: 'x' }),
  'emails.send',
);
await until(
  async () => must(await resend.emails.get(once.id), 'emails.get'),
  (email) => email.last_event === 'bounced',
  'the first email to bounce',
);
const listed = await until(
  () => resend.suppressions.get(bouncer),
  (r) => r.error === null,
  'the address on the suppression list',
);
const twice = must(
  await resend.emails.send({ from: 'SDK <hello@sdk.test>', to: bouncer, subject: 'Bounce twice', text: 'x' }),
  'emails.send',
);
const manual = await resend.suppressions.add({ email: 'Someone <Someone@Example.com>' });
seen.suppressions = {
  listed,
  twice: await until(
    async () => must(await resend.emails.get(twice.id), 'emails.get'),
    (email) => (email as { status?: string }).status !== 'queued',
    'the second email to settle',
  ),
  byOrigin: await resend.suppressions.list({ origin: 'bounce', limit: 100 }),
  manual,
  manualById: await resend.suppressions.get(must(manual, 'suppressions.add').id),
  batchAdd: await resend.suppressions.batch.add({ emails: ['a1@example.com', 'a2@example.com'] }),
  batchRemove: await resend.suppressions.batch.remove({ emails: ['a1@example.com', 'nobody@example.com'] }),
  removed: await resend.suppressions.remove(bouncer),
  removedAgain: await resend.suppressions.remove(bouncer),
};

console.log(JSON.stringify(seen));

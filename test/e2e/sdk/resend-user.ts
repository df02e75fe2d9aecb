/**
 * What a user's code does with the official `resend` package, pointed at this service by
 * RESEND_BASE_URL (and trusting the local certificate through NODE_EXTRA_CA_CERTS). Run by
 * test/e2e/resend-sdk.test.ts in its own process, as a user's program would run; prints one JSON
 * line with what it saw. Nothing here knows about the service beyond Resend's API.
 */
import { Resend } from 'resend';
import { must, type Result, startHookReceiver, until } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const seen: Record<string, unknown> = {};

// The user's webhook receiver, in this program as in a user's app, registered before anything else.
const receiver = await startHookReceiver('/resend-webhooks');
const { hooks } = receiver;
const hookUrl = receiver.url;

const webhook = must(
  await resend.webhooks.create({
    endpoint: hookUrl,
    events: ['email.sent', 'email.delivered', 'email.bounced', 'email.suppressed', 'domain.created'],
  }),
  'webhooks.create',
);
seen.webhookCreated = webhook;

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

// Metrics of the sender domain so far (the first email and the batch: delivered, delivered, bounced),
// read until they show them (counted right after the status each records), then by hour and domain.
seen.metrics = await until(
  async () =>
    must(
      await resend.emails.metrics({
        metrics: ['sent', 'delivered', 'bounced', 'bounced_permanent', 'delivery_rate', 'bounce_rate'],
        domainId: [domain.id],
        dimensions: ['period', 'domain'],
        granularity: 'hourly',
        timezone: 'UTC',
      }),
      'emails.metrics',
    ),
  (m) => (m.totals.delivered ?? 0) >= 2 && (m.totals.bounced ?? 0) >= 1,
  'the metrics to count the batch',
);
seen.metricsDefault = await resend.emails.metrics();
seen.metricsBroadcast = await resend.emails.metrics({ dimensions: ['email'] });
seen.domainId = domain.id;

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

// Webhooks: what arrived for a delivered and a bounced email, each verified as Resend's docs say.
const parsed = () => hooks.map((h) => ({ ...h, event: JSON.parse(h.body) }));
const verify = (hook: { headers: Record<string, string>; body: string }, secret: string) => {
  try {
    resend.webhooks.verify({
      payload: hook.body,
      headers: {
        id: hook.headers['svix-id'] as string,
        timestamp: hook.headers['svix-timestamp'] as string,
        signature: hook.headers['svix-signature'] as string,
      },
      webhookSecret: secret,
    });
    return true;
  } catch {
    return false;
  }
};
const eventsFor = (emailId: string) => parsed().filter((h) => h.event.data?.email_id === emailId);
const hooked = must(
  await resend.emails.send({
    from: 'SDK <hello@sdk.test>',
    to: 'success@simulator.amazonses.com',
    subject: 'Hooked',
    text: 'x',
    tags: [{ name: 'flow', value: 'webhooks' }],
  }),
  'emails.send',
);
const bounced = must(
  await resend.emails.send({
    from: 'SDK <hello@sdk.test>',
    to: 'bounce+hooks@simulator.amazonses.com',
    subject: 'Hooked bounce',
    text: 'x',
  }),
  'emails.send',
);
const types = (id: string) =>
  eventsFor(id)
    .map((h) => h.event.type)
    .sort();
await until(
  async () => [...types(hooked.id), '|', ...types(bounced.id)],
  (t) => t.join() === 'email.delivered,email.sent,|,email.bounced,email.sent',
  'the webhook events of both emails',
);
const arrived = [...eventsFor(hooked.id), ...eventsFor(bounced.id)];
seen.webhookEvents = arrived.map((h) => ({
  type: h.event.type,
  data: h.event.data,
  verified: verify(h, webhook.signing_secret),
  sameIds:
    h.headers['svix-id'] === h.headers['webhook-id'] &&
    h.headers['svix-signature'] === h.headers['webhook-signature'],
}));
seen.domainCreated = parsed().find((h) => h.event.type === 'domain.created')?.event;
seen.webhookGet = await resend.webhooks.get(webhook.id);
seen.webhookList = await resend.webhooks.list();

// Rotation: the next message is signed with both secrets; each verifies it.
const rotated = must(await resend.webhooks.rotateSigningSecret(webhook.id), 'webhooks.rotateSigningSecret');
const afterRotation = must(
  await resend.emails.send({
    from: 'SDK <hello@sdk.test>',
    to: 'success@simulator.amazonses.com',
    subject: 'Rotated',
    text: 'x',
  }),
  'emails.send',
);
await until(
  async () => types(afterRotation.id),
  (t) => t.includes('email.delivered'),
  'the event after rotation',
);
const rotatedHook = eventsFor(afterRotation.id).find((h) => h.event.type === 'email.delivered');
seen.rotation = {
  newSecretDiffers: rotated.signing_secret !== webhook.signing_secret,
  oldVerifies: rotatedHook ? verify(rotatedHook, webhook.signing_secret) : false,
  newVerifies: rotatedHook ? verify(rotatedHook, rotated.signing_secret) : false,
  signatures: rotatedHook?.headers['webhook-signature']?.split(' ').length,
};

// A webhook created while events flow, then an email sent at once: the new endpoint gets that
// email's events (each event is published once, to the endpoints known when it is raised). Then it
// is changed to other events, and deleted, each taking effect for the very next email.
const send = async (to: string, subject: string) =>
  must(await resend.emails.send({ from: 'SDK <hello@sdk.test>', to, subject, text: 'x' }), 'emails.send');
const late = must(
  await resend.webhooks.create({ endpoint: `${hookUrl}/late`, events: ['email.sent', 'email.delivered'] }),
  'webhooks.create (late)',
);
const lateTypes = (id: string) =>
  eventsFor(id)
    .filter((h) => h.url.endsWith('/late'))
    .map((h) => h.event.type)
    .sort();
const firstTypes = (id: string) =>
  eventsFor(id)
    .filter((h) => !h.url.endsWith('/late'))
    .map((h) => h.event.type)
    .sort();
const rightAfterCreate = await send('success@simulator.amazonses.com', 'Right after the webhook');
await until(
  async () => lateTypes(rightAfterCreate.id),
  (t) => t.join() === 'email.delivered,email.sent',
  "the new webhook's first email's events",
);
must(await resend.webhooks.update(late.id, { events: ['email.bounced'] }), 'webhooks.update (late)');
const rightAfterUpdate = await send('bounce+late@simulator.amazonses.com', 'Right after the update');
await until(
  async () => lateTypes(rightAfterUpdate.id),
  (t) => t.join() === 'email.bounced',
  "the changed webhook's bounce",
);
must(await resend.webhooks.remove(late.id), 'webhooks.remove (late)');
const rightAfterDelete = await send('success@simulator.amazonses.com', 'Right after the delete');
await until(
  async () => firstTypes(rightAfterDelete.id),
  (t) => t.join() === 'email.delivered,email.sent',
  "the first webhook's events of the email after the delete",
);
seen.lateWebhook = {
  afterCreate: lateTypes(rightAfterCreate.id),
  afterUpdate: [...lateTypes(rightAfterUpdate.id), '|', ...firstTypes(rightAfterUpdate.id)],
  afterDelete: lateTypes(rightAfterDelete.id),
};

// The messages, one of them in full with its attempts, replayed under the same id.
const messages = must(
  await resend.webhooks.events.list({ webhookId: webhook.id, limit: 100 }),
  'webhooks.events.list',
);
const deliveredHook = eventsFor(hooked.id).find((h) => h.event.type === 'email.delivered');
const messageId = deliveredHook?.headers['webhook-id'] as string;
seen.webhookMessages = messages;
seen.webhookMessage = await resend.webhooks.events.get({ webhookId: webhook.id, eventId: messageId });
seen.webhookAttempts = await resend.webhooks.events.attempts.list({
  webhookId: webhook.id,
  eventId: messageId,
});
const before = hooks.filter((h) => h.headers['webhook-id'] === messageId).length;
seen.replay = await resend.webhooks.events.replay({ webhookId: webhook.id, eventId: messageId });
await until(
  async () => hooks.filter((h) => h.headers['webhook-id'] === messageId).length,
  (n) => n > before,
  'the replay',
);
seen.replayed = { before, after: hooks.filter((h) => h.headers['webhook-id'] === messageId).length };

// Disabled: nothing more is published to it, so nothing arrives and no message is listed.
const messagesListed = async () =>
  must(await resend.webhooks.events.list({ webhookId: webhook.id, limit: 100 }), 'webhooks.events.list').data
    .length;
seen.disabled = await resend.webhooks.update(webhook.id, { status: 'disabled' });
seen.disabledGet = await resend.webhooks.get(webhook.id);
const listedBefore = await messagesListed();
const whileDisabled = must(
  await resend.emails.send({
    from: 'SDK <hello@sdk.test>',
    to: 'success@simulator.amazonses.com',
    subject: 'Disabled',
    text: 'x',
  }),
  'emails.send',
);
await until(
  async () => must(await resend.emails.get(whileDisabled.id), 'emails.get'),
  (email) => email.last_event === 'delivered',
  'the email sent while disabled to be delivered',
);
seen.whileDisabled = {
  received: eventsFor(whileDisabled.id).length,
  newMessages: (await messagesListed()) - listedBefore,
};
seen.webhookRemoved = await resend.webhooks.remove(webhook.id);
seen.webhookGone = await resend.webhooks.get(webhook.id);
receiver.close();

// Attachments: a Buffer, as a Node program passes a file it read, and an inline image; then the
// SDK's attachment methods, and a download of the link they give.
const invoice = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7 + (i >> 8)) % 256));
const withFiles = must(
  await resend.emails.send({
    from: 'SDK <billing@sdk.test>',
    to: 'success@simulator.amazonses.com',
    subject: 'Invoice with attachments',
    html: '<p>Thanks <img src="cid:logo"></p>',
    attachments: [
      { filename: 'invoice.pdf', content: invoice },
      { filename: 'logo.png', content: Buffer.from('not really a png'), contentId: 'logo' },
    ],
  }),
  'emails.send with attachments',
);
await until(
  async () => must(await resend.emails.get(withFiles.id), 'emails.get'),
  (email) => email.last_event === 'delivered',
  'the email with attachments to be delivered',
);
const files = must(
  await resend.emails.attachments.list({ emailId: withFiles.id }),
  'emails.attachments.list',
);
const download = await fetch(files.data[0]?.download_url ?? '');
const bytes = Buffer.from(await download.arrayBuffer());
seen.attachments = {
  listed: files.data.map(({ filename, size, content_type, content_disposition, content_id }) => ({
    filename,
    size,
    content_type,
    content_disposition,
    content_id,
  })),
  downloadStatus: download.status,
  sameBytes: bytes.equals(invoice),
  one: await resend.emails.attachments.get({ emailId: withFiles.id, id: files.data[1]?.id ?? '' }),
};

// Scheduling with the SDK's own fields and methods: one five seconds ahead (sent after its time),
// one moved from an hour ahead to three seconds ahead, one canceled; a cancel too late.
const scheduledAt = new Date(Date.now() + 5000).toISOString();
const scheduleFrom = { from: 'SDK <billing@sdk.test>', to: 'success@simulator.amazonses.com', text: 'Later' };
const due = must(
  await resend.emails.send({ ...scheduleFrom, subject: 'Scheduled', scheduledAt }),
  'emails.send with scheduledAt',
);
const waitingDue = must(await resend.emails.get(due.id), 'emails.get scheduled');
const toMove = must(
  await resend.emails.send({ ...scheduleFrom, subject: 'Moved', scheduledAt: 'in 1 hour' }),
  'emails.send in 1 hour',
);
const movedTo = new Date(Date.now() + 3000).toISOString();
const moved = await resend.emails.update({ id: toMove.id, scheduledAt: movedTo });
const toCancel = must(
  await resend.emails.send({ ...scheduleFrom, subject: 'Canceled', scheduledAt: 'tomorrow at 9am' }),
  'emails.send tomorrow',
);
const canceled = await resend.emails.cancel(toCancel.id);
const sentDue = await until(
  async () => must(await resend.emails.get(due.id), 'emails.get'),
  (email) => email.last_event === 'delivered',
  'the scheduled email to be delivered',
);
const sentMoved = await until(
  async () => must(await resend.emails.get(toMove.id), 'emails.get'),
  (email) => email.last_event === 'delivered',
  'the moved email to be delivered',
);
seen.scheduling = {
  scheduledAt,
  answered: due,
  waiting: waitingDue,
  delivered: sentDue,
  movedTo,
  moved,
  movedDelivered: sentMoved,
  canceled,
  canceledGet: await resend.emails.get(toCancel.id),
  tooLate: await resend.emails.cancel(due.id),
  pastTime: await resend.emails.send({
    ...scheduleFrom,
    subject: 'Past',
    scheduledAt: '2020-01-01T00:00:00Z',
  }),
};

console.log(JSON.stringify(seen));

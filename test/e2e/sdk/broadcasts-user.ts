/**
 * A user's program with the official `resend` package (RESEND_BASE_URL points it at `npm start`)
 * that keeps broadcasts: a draft created (with one reply-to, a preview text, a topic), another by
 * the deprecated `audienceId`, read, listed in pages, updated, duplicated, sent at a time and
 * canceled (back to a draft), scheduled on creation and deleted (which cancels it), sent at once,
 * previewed for a contact (our route, through the SDK's own `post`), and the refusals its statuses
 * make. Every call's `{data, error}` is kept, so the test reads what the SDK got. Run by
 * test/e2e/broadcasts-sdk.test.ts; prints one JSON line.
 */
import { Resend } from 'resend';
import { must, type Result, until } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const seen: Record<string, unknown> = {};
/** Keeps the SDK's answer (data and error) under `name`, and gives it back. */
const keep = async <T>(name: string, call: Promise<Result<T>>): Promise<Result<T>> => {
  const result = await call;
  seen[name] = { data: result.data, error: result.error };
  return result;
};

// A verified sending domain, a segment, a topic, a property and a contact.
const domain = must(await resend.domains.create({ name: 'news.test' }), 'domains.create');
await resend.domains.verify(domain.id);
await until(
  async () => must(await resend.domains.get(domain.id), 'domains.get'),
  (d) => d.status === 'verified',
  'the domain to be verified',
);
const segment = must(await resend.segments.create({ name: 'Readers' }), 'segments.create');
const topic = must(
  await resend.topics.create({ name: 'Newsletter', defaultSubscription: 'opt_in' }),
  'topics.create',
);
must(
  await resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' }),
  'property',
);
const ada = must(
  await resend.contacts.create({
    email: 'ada@example.test',
    firstName: 'Ada',
    properties: { plan: 'pro' },
    segments: [{ id: segment.id }],
  }),
  'contacts.create',
);
seen.ids = { segment: segment.id, topic: topic.id, contact: ada.id };

const content = {
  from: 'News <news@news.test>',
  subject: 'Hi {{{contact.first_name|there}}}',
  html: '<p>Hi {{{FIRST_NAME|there}}}, on {{{contact.plan}}}.</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
};

// A draft, read back, listed.
const draft = must(
  await keep(
    'created',
    resend.broadcasts.create({
      name: 'November',
      segmentId: segment.id,
      topicId: topic.id,
      replyTo: 'help@news.test',
      previewText: 'Three things',
      ...content,
    }),
  ),
  'broadcasts.create',
);
await keep(
  'byAudience',
  resend.broadcasts.create({ name: 'Older SDK code', audienceId: segment.id, ...content }),
);
await keep('draft', resend.broadcasts.get(draft.id));
await keep('list', resend.broadcasts.list());
await keep('listPage', resend.broadcasts.list({ limit: 1 }));

// Changed while a draft, duplicated; the copy sent in an hour, then canceled (back to a draft).
await keep(
  'updated',
  resend.broadcasts.update(draft.id, { subject: 'Hi {{{FIRST_NAME|there}}}!', previewText: 'Four things' }),
);
await keep('afterUpdate', resend.broadcasts.get(draft.id));
const copy = must(await keep('duplicated', resend.broadcasts.duplicate(draft.id)), 'broadcasts.duplicate');
await keep('copy', resend.broadcasts.get(copy.id));
await keep('scheduled', resend.broadcasts.send(copy.id, { scheduledAt: 'in 1 hour' }));
await keep('whileScheduled', resend.broadcasts.get(copy.id));
await keep('updateScheduled', resend.broadcasts.update(copy.id, { subject: 'Too late' }));
await keep('sendTwice', resend.broadcasts.send(copy.id));
await keep('canceled', resend.broadcasts.cancel(copy.id));
await keep('afterCancel', resend.broadcasts.get(copy.id));
await keep('cancelDraft', resend.broadcasts.cancel(copy.id));

// Scheduled on creation, then deleted (which cancels it).
const later = must(
  await keep(
    'createdScheduled',
    resend.broadcasts.create({
      name: 'Later',
      segmentId: segment.id,
      send: true,
      scheduledAt: new Date(Date.now() + 2 * 86_400_000).toISOString(),
      ...content,
    }),
  ),
  'broadcasts.create (scheduled)',
);
await keep('laterScheduled', resend.broadcasts.get(later.id));
await keep('removedScheduled', resend.broadcasts.remove(later.id));
await keep('afterRemove', resend.broadcasts.get(later.id));

// Sent at once (to Ada alone), and the refusals a send makes.
const now = must(
  await keep(
    'createdNow',
    resend.broadcasts.create({ name: 'Now', segmentId: segment.id, send: true, ...content }),
  ),
  'broadcasts.create (send)',
);
await keep('sentNow', resend.broadcasts.get(now.id));
await keep('removeSent', resend.broadcasts.remove(now.id));
await keep(
  'unknownTag',
  resend.broadcasts.create({
    name: 'Typo',
    segmentId: segment.id,
    send: true,
    ...content,
    html: '<p>{{{contact.shoe_size}}}</p>',
  }),
);
await keep(
  'scheduleWithoutSend',
  resend.post('/broadcasts', { segment_id: segment.id, ...content, scheduled_at: 'in 1 hour' }),
);

// Our preview, for Ada and for no one.
await keep('preview', resend.post(`/broadcasts/${draft.id}/preview`, { contact: ada.id }));
await keep('previewNoOne', resend.post(`/broadcasts/${draft.id}/preview`, {}));

// The draft deleted.
await keep('removed', resend.broadcasts.remove(draft.id));
await keep('final', resend.broadcasts.list({ limit: 100 }));

console.log(JSON.stringify(seen));

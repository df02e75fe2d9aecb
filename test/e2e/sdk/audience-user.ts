/**
 * A user's program with the official `resend` package (RESEND_BASE_URL points it at `npm start`)
 * that keeps an audience: contact properties, segments, topics, contacts (by id and by address,
 * the address in the path as the SDK puts it: unencoded, with `+`, in any case), a contact's
 * segments and topics, a CSV import, the `audienceId` variants SDK 6.38 still sends, and deletes.
 * Every call's `{data, error}` is kept, so the test reads what the SDK got. Run by
 * test/e2e/audience-sdk.test.ts; prints one JSON line.
 */
import { Resend } from 'resend';
import { must, type Result, startHookReceiver, until } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const seen: Record<string, unknown> = {};
/** Keeps the SDK's answer (data and error) under `name`, and gives it back. */
const keep = async <T>(name: string, call: Promise<Result<T>>): Promise<Result<T>> => {
  const result = await call;
  seen[name] = { data: result.data, error: result.error };
  return result;
};

// Every audience event, to a receiver of the user's own.
const receiver = await startHookReceiver('/audience-hooks');
must(
  await resend.webhooks.create({
    endpoint: receiver.url,
    events: [
      'contact.created',
      'contact.updated',
      'contact.deleted',
      'contact.topics.updated',
      'topic.created',
      'topic.updated',
      'topic.deleted',
    ] as never,
  }),
  'webhooks.create',
);

// Contact properties.
const plan = must(
  await keep(
    'propertyCreated',
    resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' }),
  ),
  'contactProperties.create',
);
const seats = must(
  await keep(
    'seatsCreated',
    resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 }),
  ),
  'contactProperties.create',
);
await keep('propertyDuplicate', resend.contactProperties.create({ key: 'plan', type: 'string' }));
await keep('properties', resend.contactProperties.list());
await keep('property', resend.contactProperties.get(plan.id));
await keep('propertyUpdated', resend.contactProperties.update({ id: plan.id, fallbackValue: 'basic' }));

// Segments (and the deprecated `audiences`, which SDK 6.38 sends to the same routes).
const customers = must(
  await keep('segmentCreated', resend.segments.create({ name: 'Customers' })),
  'segments.create',
);
const trial = must(await resend.segments.create({ name: 'Trial' }), 'segments.create');
await keep('segmentRenamed', resend.segments.update(customers.id, { name: 'Paying customers' }));
await keep('segment', resend.segments.get(customers.id));
await keep('segments', resend.segments.list());
await keep('segmentsPage', resend.segments.list({ limit: 1 }));

// Topics.
const news = must(
  await keep(
    'topicCreated',
    resend.topics.create({
      name: 'Product news',
      description: 'What we ship',
      defaultSubscription: 'opt_in',
    }),
  ),
  'topics.create',
);
const digest = must(
  await resend.topics.create({ name: 'Weekly digest', defaultSubscription: 'opt_out' }),
  'topics.create',
);
// The SDK puts the id in the body too.
await keep(
  'topicUpdated',
  resend.topics.update({ id: news.id, name: 'Product updates', description: 'Releases' }),
);
await keep('topic', resend.topics.get(news.id));
await keep('topics', resend.topics.list());
await keep(
  'topicDefaultChanged',
  resend.patch(`/topics/${news.id}`, { default_subscription: 'opt_out' }) as Promise<Result<unknown>>,
);

// Contacts: created with SDK 6.38's `segments: [{id}]` and `topics`.
const ann = must(
  await keep(
    'contactCreated',
    resend.contacts.create({
      email: 'Ann.Lee+news@Example.test',
      firstName: 'Ann',
      lastName: 'Lee',
      properties: { plan: 'pro' },
      segments: [{ id: customers.id }],
      topics: [{ id: news.id, subscription: 'opt_out' }],
    }),
  ),
  'contacts.create',
);
await keep('contactAgain', resend.contacts.create({ email: 'ann.lee+NEWS@example.test' }));
await keep(
  'contactBadProperty',
  resend.contacts.create({ email: 'x@example.test', properties: { colour: 'red' } }),
);
await keep(
  'contactBadSegment',
  resend.contacts.create({
    email: 'y@example.test',
    segments: [{ id: '0190a8c2-0000-7000-8000-000000000000' }],
  }),
);
// Resend's own shape: segment ids as strings.
await keep(
  'contactWithSegmentIds',
  resend.post('/contacts', { email: 'zoe@example.test', segments: [trial.id] }) as Promise<
    Result<{ id: string }>
  >,
);
await keep('contactById', resend.contacts.get(ann.id));
await keep('contactByAddress', resend.contacts.get('ann.lee+news@example.test'));
await keep('contactByAddressUpper', resend.contacts.get({ email: 'ANN.LEE+NEWS@EXAMPLE.TEST' }));
await keep(
  'contactUpdated',
  resend.contacts.update({ email: 'ann.lee+news@example.test', firstName: 'Anne', properties: { seats: 3 } }),
);
await keep('contactBadValue', resend.contacts.update({ id: ann.id, properties: { seats: 'many' } as never }));
await keep('contactAfterUpdate', resend.contacts.get(ann.id));
await keep('contacts', resend.contacts.list());
await keep('contactsPage', resend.contacts.list({ limit: 1 }));
await keep('customers', resend.contacts.list({ segmentId: customers.id }));

// A contact's segments and topics.
await keep('segmentAdded', resend.contacts.segments.add({ contactId: ann.id, segmentId: trial.id }));
await keep('annSegments', resend.contacts.segments.list({ email: 'ann.lee+news@example.test' }));
await keep(
  'segmentRemoved',
  resend.contacts.segments.remove({ email: 'Ann.Lee+news@example.test', segmentId: trial.id }),
);
await keep('annSegmentsAfter', resend.contacts.segments.list({ contactId: ann.id }));
// SDK 6.38 sends the bare array; Resend documents {topics: […]}.
await keep(
  'topicsUpdated',
  resend.contacts.topics.update({ id: ann.id, topics: [{ id: digest.id, subscription: 'opt_in' }] }),
);
await keep(
  'topicsUpdatedWrapped',
  resend.patch(`/contacts/${ann.id}/topics`, {
    topics: [{ id: news.id, subscription: 'opt_out' }],
  }) as Promise<Result<unknown>>,
);
await keep('annTopics', resend.contacts.topics.list({ email: 'ann.lee+news@example.test' }));

// The `audienceId` variants (POST, GET, PATCH, DELETE /v1/audiences/{id}/contacts/…), and the list.
const legacy = must(
  await keep('audienceCreated', resend.audiences.create({ name: 'Legacy list' })),
  'audiences.create',
);
await keep('audienceRoute', resend.get(`/audiences/${legacy.id}`) as Promise<Result<unknown>>);
await keep('audiencesRoute', resend.get('/audiences') as Promise<Result<unknown>>);
await keep(
  'audienceContactCreated',
  resend.contacts.create({ audienceId: legacy.id, email: 'Bob@Example.test', firstName: 'Bob' }),
);
await keep('audienceContact', resend.contacts.get({ audienceId: legacy.id, email: 'bob@example.test' }));
await keep(
  'audienceContactUpdated',
  resend.contacts.update({ audienceId: legacy.id, email: 'BOB@example.test', unsubscribed: true }),
);
await keep('audienceContacts', resend.contacts.list({ audienceId: legacy.id }));
await keep(
  'audienceContactsRoute',
  resend.get(`/audiences/${legacy.id}/contacts`) as Promise<Result<unknown>>,
);
await keep(
  'audienceContactRemoved',
  resend.contacts.remove({ audienceId: legacy.id, email: 'bob@example.test' }),
);
await keep('bobAfter', resend.contacts.get('bob@example.test'));

// An import: five rows, one with no valid address, one of an existing contact (upserted).
const csv = [
  'Email,Name,Plan',
  'carol@example.test,Carol,pro',
  'dave@example.test,Dave,',
  'not an address,Nobody,pro',
  'ANN.LEE+news@example.test,Annie,team',
  'erin@example.test,Erin,free',
].join('\n');
const imported = must(
  await keep(
    'importCreated',
    resend.contacts.imports.create({
      file: new Blob([csv], { type: 'text/csv' }),
      columnMap: { email: 'Email', firstName: 'Name', properties: { plan: { column: 'Plan' } } },
      onConflict: 'upsert',
      segments: [{ id: customers.id }],
      topics: [{ id: digest.id, subscription: 'opt_in' }],
    }),
  ),
  'contacts.imports.create',
);
seen.importDone = await until(
  async () => must(await resend.contacts.imports.get(imported.id), 'contacts.imports.get'),
  (i) => i.status === 'completed' || i.status === 'failed',
  'the import to finish',
);
await keep('imports', resend.contacts.imports.list());
await keep('importsCompleted', resend.contacts.imports.list({ status: 'completed' }));
// Over the limit a request can carry (about 4 MB of file): 413, saying so.
await keep(
  'importTooLarge',
  resend.contacts.imports.create({
    file: new Blob([`email\n${'a'.repeat(5 * 1024 * 1024)}`], { type: 'text/csv' }),
  }),
);
await keep('customersAfterImport', resend.contacts.list({ segmentId: customers.id, limit: 100 }));
await keep('annAfterImport', resend.contacts.get(ann.id));

// Deletes: a property (gone from every contact), a segment, a topic, a contact.
await keep('propertyRemoved', resend.contactProperties.remove(seats.id));
await keep('annWithoutSeats', resend.contacts.get(ann.id));
await keep('segmentRemovedWhole', resend.segments.remove(trial.id));
await keep('zoeAfterSegment', resend.contacts.get('zoe@example.test'));
await keep('topicRemoved', resend.topics.remove(digest.id));
await keep('contactRemoved', resend.contacts.remove('carol@example.test'));
await keep('carolAfter', resend.contacts.get('carol@example.test'));
await keep('audienceRemoved', resend.audiences.remove(legacy.id));

// A key that may only send is refused every audience route.
const sender = must(
  await resend.apiKeys.create({ name: 'sender', permission: 'sending_access' }),
  'apiKeys.create',
);
await keep('restricted', new Resend(sender.token).contacts.list());

seen.ids = {
  customers: customers.id,
  trial: trial.id,
  news: news.id,
  digest: digest.id,
  ann: ann.id,
  legacy: legacy.id,
};

// The webhook events, once each kind has arrived.
seen.hooks = (
  await until(
    async () => receiver.hooks.map((hook) => JSON.parse(hook.body) as { type: string }),
    (events) =>
      [
        'contact.created',
        'contact.updated',
        'contact.deleted',
        'contact.topics.updated',
        'topic.created',
        'topic.updated',
        'topic.deleted',
      ].every((type) => events.some((event) => event.type === type)),
    'the audience webhooks',
  )
).slice();
receiver.close();

console.log(JSON.stringify(seen));

/**
 * The official resend SDK (6.38) keeps an audience against `npm start`, unchanged: contact
 * properties, segments, topics, contacts by id and by address (unencoded, with `+`, in any case),
 * a contact's segments and topics (the bare array SDK 6.38 sends, and Resend's `{topics}`), the
 * `audienceId` routes, a CSV import and its 413 above the limit, deletes, a sending-only key
 * refused, and the contact.* and topic.* webhooks. Each answer fits Resend's schema (the contract
 * check records every answer too: test/support/contract.ts). The program: test/e2e/sdk/audience-user.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ service, seen, stop } = await runSdkProgram('test/e2e/sdk/audience-user.ts'));
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
const failure = (name: string, status: number | number[]) => {
  const error = seen[name]?.error;
  expect(error, name).toBeTruthy();
  expect([status].flat(), `${name}: ${JSON.stringify(error)}`).toContain(error.statusCode);
  return error as { statusCode: number; name: string; message: string };
};
const idsOf = (list: { data: { id: string }[] }) => list.data.map((item) => item.id);

describe('the official resend SDK keeps an audience on npm start', () => {
  it('runs against the local service', () => {
    expect(service.baseUrl).toMatch(/^https:\/\/localhost:\d+\/v1$/);
  });

  it('contactProperties.*: create, list, get, update the fallback; a key taken twice is refused', () => {
    for (const name of ['propertyCreated', 'seatsCreated']) {
      expectResendShape(data(name), 'CreateContactPropertyResponseSuccess');
      expect(data(name).id).toMatch(UUID_V7);
    }
    failure('propertyDuplicate', [400, 409, 422]);
    // The SDK turns the answers' snake_case into its own camelCase (the contract check saw the raw ones).
    expect(
      data('properties')
        .data.map((p: { key: string }) => p.key)
        .sort(),
    ).toEqual(['plan', 'seats']);
    expect(data('property')).toMatchObject({
      object: 'contact_property',
      key: 'plan',
      type: 'string',
      fallbackValue: 'free',
    });
    expectResendShape(data('propertyUpdated'), 'UpdateContactPropertyResponseSuccess');
  });

  it('segments.*: create, rename, get, list in pages', () => {
    expectResendShape(data('segmentCreated'), 'CreateSegmentResponseSuccess');
    expect(data('segmentCreated').id).toMatch(UUID_V7);
    expectResendShape(data('segment'), 'GetSegmentResponseSuccess');
    expect(data('segment')).toMatchObject({ id: seen.ids.customers, name: 'Paying customers' });
    expectResendShape(data('segments'), 'ListSegmentsResponseSuccess');
    expect(idsOf(data('segments'))).toEqual(expect.arrayContaining([seen.ids.customers, seen.ids.trial]));
    expect(data('segmentsPage').data).toHaveLength(1);
    expect(data('segmentsPage').has_more).toBe(true);
  });

  it('topics.*: create, update (with the id SDK 6.38 puts in the body), get, list; default_subscription cannot change', () => {
    expectResendShape(data('topicCreated'), 'CreateTopicResponseSuccess');
    expectResendShape(data('topicUpdated'), 'UpdateTopicResponseSuccess');
    expectResendShape(data('topic'), 'GetTopicResponseSuccess');
    expect(data('topic')).toMatchObject({
      id: seen.ids.news,
      name: 'Product updates',
      description: 'Releases',
      default_subscription: 'opt_in',
    });
    expectResendShape(data('topics'), 'ListTopicsResponseSuccess');
    expect(idsOf(data('topics'))).toEqual(expect.arrayContaining([seen.ids.news]));
    expect(failure('topicDefaultChanged', 400).message).toMatch(/default_subscription/);
  });

  it('contacts.create: one contact per address (any case), segments as [{id}] or ids, a property or segment unknown named in a 400', () => {
    expectResendShape(data('contactCreated'), 'CreateContactResponseSuccess');
    expect(seen.ids.ann).toMatch(UUID_V7);
    // Resend answers a second create of an address with the contact it has (resend/resend-node#494).
    expect(data('contactAgain').id).toBe(seen.ids.ann);
    expect(failure('contactBadProperty', 400).message).toMatch(/colour/);
    expect(failure('contactBadSegment', [400, 404, 422]).message).toMatch(
      /0190a8c2-0000-7000-8000-000000000000/,
    );
    expect(data('contactWithSegmentIds').id).toMatch(UUID_V7);
  });

  it('contacts.get by id, by address in the path with + unencoded, and in another case: one contact', () => {
    for (const name of ['contactById', 'contactByAddress', 'contactByAddressUpper']) {
      expectResendShape(data(name), 'GetContactResponseSuccess');
      expect(data(name), name).toMatchObject({
        object: 'contact',
        id: seen.ids.ann,
        first_name: 'Ann',
        last_name: 'Lee',
        unsubscribed: false,
      });
      expect(data(name).email.toLowerCase()).toBe('ann.lee+news@example.test');
      expect(data(name).properties).toMatchObject({ plan: 'pro' });
    }
  });

  it('contacts.update: names and properties, a value of the wrong type named in a 400', () => {
    expectResendShape(data('contactUpdated'), 'UpdateContactResponseSuccess');
    expect(failure('contactBadValue', 400).message).toMatch(/seats/);
    expect(data('contactAfterUpdate')).toMatchObject({
      first_name: 'Anne',
      properties: { plan: 'pro', seats: 3 },
    });
  });

  it('contacts.list: cursor pages, and a segment’s members (the SDK’s segmentId)', () => {
    expectResendShape(data('contacts'), 'ListContactsResponseSuccess');
    expect(idsOf(data('contacts'))).toContain(seen.ids.ann);
    expect(data('contactsPage').data).toHaveLength(1);
    expect(data('contactsPage').has_more).toBe(true);
    expectResendShape(data('customers'), 'ListContactsResponseSuccess');
    expect(idsOf(data('customers'))).toEqual([seen.ids.ann]);
  });

  it('contacts.segments.*: add, list (by address or id), remove', () => {
    expectResendShape(data('segmentAdded'), 'AddContactToSegmentResponseSuccess');
    expectResendShape(data('annSegments'), 'ListContactSegmentsResponseSuccess');
    expect(idsOf(data('annSegments')).sort()).toEqual([seen.ids.customers, seen.ids.trial].sort());
    expectResendShape(data('segmentRemoved'), 'RemoveContactFromSegmentResponseSuccess');
    expect(idsOf(data('annSegmentsAfter'))).toEqual([seen.ids.customers]);
  });

  it('contacts.topics.*: the bare array SDK 6.38 sends and Resend’s {topics}; every topic with the contact’s choice', () => {
    expectResendShape(data('topicsUpdated'), 'UpdateContactTopicsResponseSuccess');
    expectResendShape(data('topicsUpdatedWrapped'), 'UpdateContactTopicsResponseSuccess');
    expectResendShape(data('annTopics'), 'GetContactTopicsResponseSuccess');
    const choices = Object.fromEntries(
      data('annTopics').data.map((t: { id: string; subscription: string }) => [t.id, t.subscription]),
    );
    expect(choices).toEqual({ [seen.ids.news]: 'opt_out', [seen.ids.digest]: 'opt_in' });
  });

  it('the audienceId variants: /v1/audiences and its contacts map onto segments', () => {
    expectResendShape(data('audienceRoute'), 'GetAudienceResponseSuccess');
    expect(data('audienceRoute')).toMatchObject({
      object: 'audience',
      id: seen.ids.legacy,
      name: 'Legacy list',
    });
    expectResendShape(data('audiencesRoute'), 'ListAudiencesResponseSuccess');
    expect(data('audienceContactCreated').id).toMatch(UUID_V7);
    expect(data('audienceContact').email.toLowerCase()).toBe('bob@example.test');
    expect(data('audienceContactUpdated')).toBeTruthy();
    for (const name of ['audienceContacts', 'audienceContactsRoute']) {
      expectResendShape(data(name), 'ListContactsResponseSuccess');
      expect(data(name).data, name).toEqual([
        expect.objectContaining({ id: data('audienceContactCreated').id, unsubscribed: true }),
      ]);
    }
    expectResendShape(data('audienceContactRemoved'), 'RemoveContactResponseSuccess');
  });

  it('contacts.imports.*: a CSV upserted into a segment and a topic, a bad row counted failed, listed by status', () => {
    expectResendShape(data('importCreated'), 'CreateContactImportResponseSuccess');
    expectResendShape(seen.importDone, 'GetContactImportResponseSuccess');
    expect(seen.importDone).toMatchObject({
      object: 'contact_import',
      id: data('importCreated').id,
      status: 'completed',
      counts: { total: 5, created: 3, updated: 1, skipped: 0, failed: 1 },
    });
    expectResendShape(data('imports'), 'ListContactImportsResponseSuccess');
    expect(idsOf(data('importsCompleted'))).toContain(data('importCreated').id);
    const members = data('customersAfterImport').data.map((c: { email: string }) => c.email.toLowerCase());
    expect(members.sort()).toEqual(
      ['ann.lee+news@example.test', 'carol@example.test', 'dave@example.test', 'erin@example.test'].sort(),
    );
    expect(data('annAfterImport')).toMatchObject({ first_name: 'Annie', properties: { plan: 'team' } });
  });

  it('an import over the limit a request carries is refused with 413, saying the limit', () => {
    expect(failure('importTooLarge', 413).message).toMatch(/MB/);
  });

  it('deletes: a property vanishes from every contact, a segment or topic deletes no contact, a contact is gone', () => {
    expectResendShape(data('propertyRemoved'), 'RemoveContactPropertyResponseSuccess');
    expect(data('annWithoutSeats').properties).not.toHaveProperty('seats');
    expectResendShape(data('segmentRemovedWhole'), 'RemoveSegmentResponseSuccess');
    expect(data('zoeAfterSegment').email).toBe('zoe@example.test');
    expectResendShape(data('topicRemoved'), 'RemoveTopicResponseSuccess');
    expectResendShape(data('contactRemoved'), 'RemoveContactResponseSuccess');
    failure('carolAfter', 404);
    expect(data('audienceRemoved')).toMatchObject({ deleted: true });
  });

  it('refuses a sending-only key on the audience routes', () => {
    // As every route needing full access answers a sending-only key here (docs/api.md, "Errors").
    expect(failure('restricted', 403).name).toBe('restricted_api_key');
  });

  it('raises contact.* and topic.* webhooks in SDK 6.38’s payloads', () => {
    const ofType = (type: string) => seen.hooks.filter((event: { type: string }) => event.type === type);
    const created = ofType('contact.created').find(
      (event: { data: { id: string } }) => event.data.id === seen.ids.ann,
    );
    expectResendShape(created, 'ContactCreatedEvent');
    for (const event of ofType('contact.updated')) expectResendShape(event, 'ContactUpdatedEvent');
    for (const event of ofType('contact.deleted')) expectResendShape(event, 'ContactDeletedEvent');
    // SDK 6.38's payload: the contact's address and the choices just made.
    const topics = ofType('contact.topics.updated').find(
      (event: { data: { email: string } }) => event.data.email.toLowerCase() === 'ann.lee+news@example.test',
    );
    expect(topics?.data.topics, JSON.stringify(ofType('contact.topics.updated'))).toEqual(
      expect.arrayContaining([{ id: seen.ids.digest, subscription: 'opt_in' }]),
    );
    expect(ofType('topic.created').map((event: { data: { id: string } }) => event.data.id)).toEqual(
      expect.arrayContaining([seen.ids.news, seen.ids.digest]),
    );
    expect(ofType('topic.deleted').map((event: { data: { id: string } }) => event.data.id)).toContain(
      seen.ids.digest,
    );
  });
});

import type { AudienceCleanup } from '../contacts/cleanup-jobs.js';
import type { Topic, TopicChoice } from '../contacts/contact.js';
import { contactTopicsEvent, topicEvent } from '../contacts/events.js';
import type { AudienceReads } from '../contacts/reads.js';
import { conflict, notFound, validationError } from '../shared/errors.js';
import { newUuid } from '../shared/ids.js';
import type { PageQuery } from '../shared/list.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import type { ChoiceInput, CreateTopicInput, UpdateTopicInput } from './model.js';
import { toContactTopic } from './model.js';
import type { TopicStore } from './ports.js';

/**
 * Topics and a contact's choices of them: the use cases behind the topic routes and
 * `/v1/contacts/{id}/topics`. A topic's choices are items of their own (one per contact), so
 * deleting a topic hands its choices to the audience clean-up, off the request path.
 */
export interface TopicDeps {
  topics: TopicStore;
  clock: Clock;
  /** Where topic.* and contact.topics.updated go (none: no events). */
  events?: EventPublisher;
  log?: Log;
  counters?: Counters;
}

export interface ContactTopicDeps extends TopicDeps {
  audience: Pick<AudienceReads, 'contact' | 'choicesOf' | 'topics'>;
}

const topicNotFound = (id: string) => notFound(`Topic "${id}" not found.`);
const contactNotFound = (idOrEmail: string) => notFound(`Contact "${idOrEmail}" not found.`);

/** Updates of one topic racing: each is tried again over what the other wrote, this many times in all. */
const UPDATE_ATTEMPTS = 3;

const raiseTopic = (
  deps: TopicDeps,
  type: 'topic.created' | 'topic.updated' | 'topic.deleted',
  topic: Topic,
) => publishQuietly(deps, type, () => [topicEvent(type, deps.clock.now().toISOString(), topic)]);

export async function createTopic(deps: TopicDeps, input: CreateTopicInput): Promise<Topic> {
  const at = deps.clock.now().toISOString();
  const topic: Topic = {
    id: newUuid(),
    name: input.name,
    description: input.description ?? null,
    default_subscription: input.default_subscription,
    visibility: input.visibility ?? 'private',
    created_at: at,
    updated_at: at,
  };
  await deps.topics.create(topic);
  await raiseTopic(deps, 'topic.created', topic);
  return topic;
}

export async function getTopic(deps: Pick<TopicDeps, 'topics'>, id: string): Promise<Topic> {
  const topic = await deps.topics.get(id);
  if (!topic) throw topicNotFound(id);
  return topic;
}

export const listTopics = (deps: Pick<TopicDeps, 'topics'>, page: PageQuery) => deps.topics.list(page);

/**
 * Changes a topic's name, description or visibility. `default_subscription` is fixed at creation:
 * a different one is a 400 (the same one changes nothing). An `id` in the body (SDK 6.38 sends it)
 * must be the path's.
 */
export async function updateTopic(deps: TopicDeps, id: string, input: UpdateTopicInput): Promise<Topic> {
  if (input.id !== undefined && input.id !== id) {
    const message = `The id in the body ("${input.id}") is not the path's ("${id}").`;
    throw validationError(message, [{ field: 'id', message }]);
  }
  for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
    const previous = await getTopic(deps, id);
    if (
      input.default_subscription !== undefined &&
      input.default_subscription !== previous.default_subscription
    ) {
      const message = `default_subscription cannot be changed once a topic is created (it is ${previous.default_subscription}); create another topic instead.`;
      throw validationError(message, [{ field: 'default_subscription', message }]);
    }
    const next: Topic = {
      ...previous,
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.visibility === undefined ? {} : { visibility: input.visibility }),
      updated_at: laterThan(deps.clock.now().toISOString(), previous.updated_at),
    };
    if (await deps.topics.replace(next, previous)) {
      await raiseTopic(deps, 'topic.updated', next);
      return next;
    }
  }
  throw conflict('Other requests changed the topic at the same time; try again.');
}

/** A time after `previous` (two changes within a millisecond still differ: the write's condition compares it). */
function laterThan(now: string, previous: string): string {
  if (now > previous) return now;
  return new Date(Date.parse(previous) + 1).toISOString();
}

/**
 * Deletes a topic now; its contacts' choices go off the request path (the audience clean-up: a
 * topic may have a million). The clean-up job is queued first: a queue that refuses fails the
 * request with the topic still there, so a retry deletes it and queues again; the other way, a
 * refusal would leave a deleted topic (a retry: 404) whose choices nothing removes. A job is
 * idempotent and waits 10 s; one for an id that has no topic (then a 404) finds nothing to delete.
 */
export async function deleteTopic(
  deps: TopicDeps & { cleanup: AudienceCleanup },
  id: string,
): Promise<Topic> {
  await deps.cleanup.enqueue({ kind: 'topic', topic_id: id });
  const topic = await deps.topics.remove(id);
  if (!topic) throw topicNotFound(id);
  await raiseTopic(deps, 'topic.deleted', {
    ...topic,
    updated_at: laterThan(deps.clock.now().toISOString(), topic.updated_at),
  });
  return topic;
}

/** Every topic (a page of them) with the contact's subscription: its choice, else the topic's default. */
export async function contactTopics(
  deps: Pick<ContactTopicDeps, 'topics' | 'audience'>,
  idOrEmail: string,
  page: PageQuery,
) {
  const contact = await deps.audience.contact(idOrEmail);
  if (!contact) throw contactNotFound(idOrEmail);
  const [topics, choices] = await Promise.all([deps.topics.list(page), deps.audience.choicesOf(contact.id)]);
  const byTopic = new Map(choices.map((choice) => [choice.topic_id, choice]));
  return {
    has_more: topics.has_more,
    data: topics.data.map((topic) => toContactTopic(topic, byTopic.get(topic.id))),
  };
}

/**
 * Records a contact's choices for the topics given (the others keep theirs) and raises
 * `contact.topics.updated` with them. Every topic must exist (400 naming the first that does not);
 * a topic named twice is a 400.
 */
export async function updateContactTopics(
  deps: ContactTopicDeps,
  idOrEmail: string,
  given: readonly ChoiceInput[],
): Promise<{ contactId: string; topics: ChoiceInput[] }> {
  const seen = new Set<string>();
  given.forEach((choice, index) => {
    if (seen.has(choice.id)) {
      const message = `The topic "${choice.id}" is given twice.`;
      throw validationError(message, [{ field: `topics.${index}.id`, message }]);
    }
    seen.add(choice.id);
  });
  const [contact, topics] = await Promise.all([
    deps.audience.contact(idOrEmail, true),
    deps.audience.topics(),
  ]);
  if (!contact) throw contactNotFound(idOrEmail);
  const known = new Set(topics.map((topic) => topic.id));
  given.forEach((choice, index) => {
    if (!known.has(choice.id)) {
      const message = `The topic "${choice.id}" does not exist.`;
      throw validationError(message, [{ field: `topics.${index}.id`, message }]);
    }
  });
  const at = deps.clock.now().toISOString();
  const choices: TopicChoice[] = given.map((choice) => ({
    contact_id: contact.id,
    topic_id: choice.id,
    subscription: choice.subscription,
    updated_at: at,
  }));
  if (!(await deps.topics.setChoices(contact.id, choices))) throw contactNotFound(idOrEmail);
  const topicsSet = given.map(({ id, subscription }) => ({ id, subscription }));
  await publishQuietly(deps, 'contact.topics.updated', () => [contactTopicsEvent(at, contact, topicsSet)]);
  return { contactId: contact.id, topics: topicsSet };
}

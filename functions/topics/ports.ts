import type { Topic, TopicChoice } from '../contacts/contact.js';
import type { PageQuery } from '../shared/list.js';

/** Where topics and contacts' topic choices are written (adapters/dynamodb/topic-store.ts). */
export interface TopicStore {
  /** Puts a new topic (its id is new: a collision is an error). */
  create(topic: Topic): Promise<void>;
  /** Read strongly consistent; undefined when there is none. */
  get(id: string): Promise<Topic | undefined>;
  /** Newest first, in pages. */
  list(page: PageQuery): Promise<{ data: Topic[]; has_more: boolean }>;
  /** Replaces `previous` with `next` if it is still as read (its `updated_at`); false when it changed or went. */
  replace(next: Topic, previous: Topic): Promise<boolean>;
  /** Deletes it; the topic it was, or undefined when there was none. */
  remove(id: string): Promise<Topic | undefined>;
  /**
   * Writes one contact's choices (an item each, put whole: writing one again changes nothing);
   * false when the contact is found gone after the write (deleted meanwhile).
   */
  setChoices(contactId: string, choices: readonly TopicChoice[]): Promise<boolean>;
}

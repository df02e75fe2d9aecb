import type { PageQuery } from '../shared/list.js';
import type { Broadcast, BroadcastContent, BroadcastStatus } from './broadcast.js';

/** A page of a list, newest first. */
export interface Page<T> {
  readonly data: T[];
  readonly has_more: boolean;
}

/**
 * What a change of status may start from: the statuses it takes and the generation read (so a
 * change made meanwhile, by another request or by the fan-out, makes it fail instead of being lost).
 */
export interface Expected {
  readonly statuses: readonly BroadcastStatus[];
  readonly generation: number;
}

/** A change of status the API makes (send, cancel): the fan-out's fields are never written here. */
export interface StatusChange {
  readonly status: BroadcastStatus;
  readonly generation: number;
  /** Set (a string) or cleared (null); absent: left as it is. */
  readonly scheduled_at?: string | null;
}

/**
 * Where the API keeps broadcasts (adapters/dynamodb/broadcast-store.ts). Every change but `create`
 * is an UpdateItem of the API's own fields, conditioned on the status and generation read, so it
 * never erases what the fan-out writes beside them (`fanout`, `waiting`, `sent_at`).
 */
export interface BroadcastStore {
  /** Puts a new broadcast (its id is new: a collision is an error). */
  create(broadcast: Broadcast): Promise<void>;
  /** Read strongly consistent; undefined when there is none. */
  get(id: string): Promise<Broadcast | undefined>;
  /** Newest first, in pages. */
  list(page: PageQuery): Promise<Page<Broadcast>>;
  /** Sets these content fields of a draft still at `generation`; false when it is no longer (or gone). */
  updateDraft(id: string, generation: number, content: Partial<BroadcastContent>): Promise<boolean>;
  /** Moves it to another status if it is still as expected; false when it is not (or gone). */
  changeStatus(id: string, expected: Expected, change: StatusChange): Promise<boolean>;
  /** Deletes it if it is still as expected; false when it is not (or gone). */
  remove(id: string, expected: Expected): Promise<boolean>;
}

/**
 * The fan-out queue (BROADCAST_FANOUT_QUEUE_URL): one message per step of a broadcast,
 * `{"broadcast_id", "generation"}`, visible after `delayMs` (SQS holds it at most 15 minutes: a
 * longer wait is the fan-out's to renew). The worker drops a message whose generation is not the
 * broadcast's, or whose broadcast is canceled, sent or gone.
 */
export interface BroadcastFanOutQueue {
  next(broadcastId: string, generation: number, delayMs: number): Promise<void>;
}

import type { Contact } from '../contacts/contact.js';
import type { AudienceReads } from '../contacts/reads.js';
import type { DueJob, EmailRepository, SendJob, SweepStore } from '../emails/ports.js';
import type { SendQuotaStore } from '../shared/pacing.js';
import type { Clock, Log } from '../shared/ports.js';
import type { UnsubscribeLinks } from '../unsubscribe/links.js';
import type { Broadcast, BroadcastTotalsReader, FanOutProgress } from './broadcast.js';
import type { BroadcastFanOutQueue } from './ports.js';

/**
 * The ports of a broadcast's fan-out (fan-out.ts): the broadcast item's fan-out attributes, the
 * segment's members a page at a time, the lane its emails wait in and the queue of its own steps.
 */

/** The fan-out's writes on the broadcast item (adapters/dynamodb/fan-out-store.ts), each conditioned on its generation. */
export interface FanOutStore {
  /** The broadcast as stored, read consistently (undefined: gone). */
  get(id: string): Promise<Broadcast | undefined>;
  /**
   * Its fan-out begins: `fanout` set, status `sending`, `sent_at` (when its sending began), `waiting`
   * removed; only while it is `queued` or `scheduled` at this generation and has no `fanout` yet.
   */
  begin(id: string, generation: number, progress: FanOutProgress, sentAt: string): Promise<boolean>;
  /**
   * A page is done: `fanout` moved on from the page that began at `previousPageAt`, status
   * `sending`, `waiting` removed; false when another step moved it first, or the broadcast moved on.
   */
  checkpoint(id: string, generation: number, previousPageAt: number, next: FanOutProgress): Promise<boolean>;
  /** It waits (SES's quota spent, or sending paused): status `queued`, `waiting` set (its `since` kept for the same reason). */
  wait(id: string, generation: number, waiting: NonNullable<Broadcast['waiting']>): Promise<boolean>;
  /** Every email handled: status `sent`, only from `sending` at this generation with every page done. */
  finish(id: string, generation: number): Promise<boolean>;
}

/** One member of a segment, as the fan-out pages them. */
export interface SegmentMember {
  contact_id: string;
  /** When the contact joined the segment (its membership's `created_at`). */
  joined_at: string;
  /** The contact (undefined: deleted, its clean-up still to come). */
  contact?: Contact;
}

/** A segment's members, oldest contact id first (adapters/dynamodb/contact-listing.ts). */
export interface SegmentMemberPages {
  /**
   * Up to `limit` members whose contact id sorts after `after` (null: from the first), and the last
   * contact id read (the next page's `after`, even when that member left meanwhile).
   */
  membersAfter(
    segmentId: string,
    after: string | null,
    limit: number,
  ): Promise<{ members: SegmentMember[]; last: string | null; has_more: boolean }>;
}

/** The broadcast lane (BROADCAST_SEND_QUEUE_URL): its emails' send jobs, behind transactional mail. */
export interface BroadcastLane {
  /** Queues every job, retrying what the queue refuses; throws when some are still refused. */
  enqueue(jobs: (SendJob | DueJob)[]): Promise<void>;
}

/** Where the fan-out's next step is queued (the API queues the first): ports.ts. */
export type { BroadcastFanOutQueue } from './ports.js';

export interface FanOutDeps {
  store: FanOutStore;
  members: SegmentMemberPages;
  audience: Pick<AudienceReads, 'topic' | 'choicesFor' | 'properties'>;
  emails: Pick<EmailRepository, 'createMany' | 'states'>;
  /** Moves the sweeper back to a page's emails (made under ids as old as the page: a redone page's are older). */
  sweep?: Pick<SweepStore, 'rewind'>;
  lane: BroadcastLane;
  queue: BroadcastFanOutQueue;
  /** The account's limits as the send consumers last read them from SES. */
  quota: Pick<SendQuotaStore, 'get'>;
  totals: BroadcastTotalsReader;
  unsubscribeLinks: UnsubscribeLinks;
  clock: Clock;
  log?: Log;
}

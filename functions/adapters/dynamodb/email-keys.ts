import type { SearchKind, SearchTerms } from '../../emails/search.js';
import { DUE_INDEX, INDEXES, keys, SEARCH_INDEX, shardOf, TTL_ATTRIBUTE } from './table.js';
import { DEFAULT_LAYOUT, type TableLayout } from './table-layout.js';

/**
 * Where an email's items sit in the indexes, and when they expire: every write of an index key or
 * an expiry goes through here (the repositories, the sweeper's store and the local runtime), so the
 * layout below is the only one there is.
 *
 * **Shards.** One index partition takes about 1,000 writes a second, and the listing and due
 * indexes are sorted by time-ordered ids, so DynamoDB cannot split a partition for heat. Each email
 * goes to one of `shards` partitions of each index, chosen by a hash of its id (FNV-1a):
 * `EMAILS#07` in `emails-by-time-keys`, `EMAILS#<status>#07` in `emails-by-status`, `DUE#07` in
 * `emails-by-due`. Readers read every shard and merge them (shared/sorted-merge.ts); a table written
 * before sharding has its emails in the unsharded partitions (`EMAILS`, `EMAILS#<status>`, `DUE`),
 * which readers read as one more shard, so nothing needs rewriting. The shard count may be raised
 * (new emails spread wider, readers read every shard up to the new count) but never lowered: the
 * emails in the shards above a lowered count would drop out of lists (the stack refuses nothing it
 * cannot see; docs/scale.md).
 *
 * **Expiry.** An email's items (status, summary, bodies) expire `retentionDays` after it was created
 * or, when scheduled, after its time; each event `retentionDays` after it happened. DynamoDB's TTL
 * deletes them (free of write units) within days after, and the indexes lose their entries with them.
 *
 * **Search.** `emails-by-search` (keys only) holds one entry per distinct recipient (To, Cc and
 * Bcc, the address lower-cased: `SEARCH#to#<address>#<shard>`), one for the sender's domain
 * (`SEARCH#from#<domain>#<shard>`) and one per tag (`SEARCH#tag#<name>:<value>#<shard>`), each
 * sorted by the email's id, so each is a newest-first list of its own. The sender's domain rides
 * on the summary item and the first recipient on the body item (an index write each, no item of
 * their own); every further recipient and tag is a small item (`SEARCH#<kind>#<value>`) of the
 * email's partition. All are written once with the email, never updated, and expire with it. The
 * shard is a hash of the email id over SEARCH_SHARDS, so one address, domain or tag on every email
 * spreads its index writes (a throttled index throttles the table's writes: the send path's).
 */
export {
  DEFAULT_LAYOUT,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_SHARDS,
  layoutProblem,
  MAX_SHARDS,
  parseLayout,
  type TableLayout,
} from './table-layout.js';

/**
 * Partitions of each search entry's list, by a hash of the email id: 16 take 16,000 emails a second
 * that all share one address, domain or tag (1,000 writes a second a partition, an entry a write
 * unit), above the 10,000 a second the service aims at. Fixed, not a setting: a search reads
 * exactly these partitions.
 */
export const SEARCH_SHARDS = 16;

const DAY_MS = 86_400_000;
type Item = Record<string, unknown>;

export class EmailKeys {
  constructor(readonly layout: TableLayout = DEFAULT_LAYOUT) {}

  private shard(id: string) {
    return keys.shard(shardOf(id, this.layout.shards));
  }

  /** A new email's status item keys in the indexes: queued, and due at its time if scheduled. */
  created(id: string, scheduledAt?: string): Item {
    return {
      [INDEXES.emailsByTime.partitionKey]: `${keys.allEmails}#${this.shard(id)}`,
      [INDEXES.emailsByTime.sortKey]: id,
      [INDEXES.emailsByStatus.partitionKey]: this.withStatus(id, 'queued'),
      [INDEXES.emailsByStatus.sortKey]: id,
      ...(scheduledAt ? this.due(id, scheduledAt) : {}),
    };
  }

  /** The status index partition of this email with this status. */
  withStatus(id: string, status: string): string {
    return `${keys.emailsWithStatus(status)}#${this.shard(id)}`;
  }

  /** The due index keys of a scheduled email at this time. */
  due(id: string, at: string): Item {
    return {
      [DUE_INDEX.partitionKey]: `${keys.due}#${this.shard(id)}`,
      [DUE_INDEX.sortKey]: keys.dueSk(at, id),
    };
  }

  /** The due index's key attributes, for a REMOVE (an email sent or final leaves the index). */
  static readonly dueKeys = `${DUE_INDEX.partitionKey}, ${DUE_INDEX.sortKey}`;

  /** Every partition of the time index: the shards, then the unsharded one of earlier versions. */
  timePartitions(): string[] {
    return [...this.shards().map((s) => `${keys.allEmails}#${s}`), keys.allEmails];
  }

  statusPartitions(status: string): string[] {
    return [
      ...this.shards().map((s) => `${keys.emailsWithStatus(status)}#${s}`),
      keys.emailsWithStatus(status),
    ];
  }

  duePartitions(): string[] {
    return [...this.shards().map((s) => `${keys.due}#${s}`), keys.due];
  }

  /** The search index partitions of one term (`to`, an address lower-cased; `from`, a domain; `tag`, `name:value`). */
  static searchPartitions(kind: SearchKind, value: string): string[] {
    return Array.from({ length: SEARCH_SHARDS }, (_, i) => `SEARCH#${kind}#${value}#${keys.shard(i)}`);
  }

  /**
   * A new email's search entries: the index keys the summary item carries (its sender's domain),
   * those the body item carries (its first recipient), and the items of its other recipients and
   * tags, each expiring as `expiry` says (the email's own expiry).
   */
  searchEntries(id: string, terms: SearchTerms, expiry: Item): { summary: Item; body: Item; items: Item[] } {
    const entry = (kind: SearchKind, value: string): Item => ({
      [SEARCH_INDEX.partitionKey]: `SEARCH#${kind}#${value}#${keys.shard(shardOf(id, SEARCH_SHARDS))}`,
      [SEARCH_INDEX.sortKey]: id,
    });
    const [first, ...others] = [...new Set(terms.recipients)];
    const extra: [SearchKind, string][] = [
      ...others.map((address): [SearchKind, string] => ['to', address]),
      ...[...new Set(terms.tags)].map((tag): [SearchKind, string] => ['tag', tag]),
    ];
    return {
      summary: entry('from', terms.senderDomain),
      body: first === undefined ? {} : entry('to', first),
      items: extra.map(([kind, value]) => ({
        pk: keys.email(id),
        sk: `${EmailKeys.searchItemPrefix}${kind}#${value}`,
        ...entry(kind, value),
        ...expiry,
      })),
    };
  }

  /** What the sort key of every search item of an email starts with. */
  static readonly searchItemPrefix = 'SEARCH#';

  /** Shard names, `00` to the last. */
  shards(): string[] {
    return Array.from({ length: this.layout.shards }, (_, i) => keys.shard(i));
  }

  /**
   * The expiry of an email's items: `retentionDays` after it was created, or after its time when
   * it is scheduled later (it always outlives its wait); none when emails are kept until deleted.
   */
  expiry(createdAt: string, scheduledAt?: string): Item {
    const from = Math.max(Date.parse(createdAt), scheduledAt ? Date.parse(scheduledAt) : 0);
    return this.expiringFrom(from);
  }

  /** The expiry of one of its events: `retentionDays` after the event. */
  eventExpiry(at: string): Item {
    return this.expiringFrom(Date.parse(at));
  }

  private expiringFrom(ms: number): Item {
    if (this.layout.retentionDays === 0 || !Number.isFinite(ms)) return {};
    return { [TTL_ATTRIBUTE]: Math.ceil((ms + this.layout.retentionDays * DAY_MS) / 1000) };
  }
}

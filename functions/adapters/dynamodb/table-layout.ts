import { INDEXES, LEGACY_INDEXES } from './table.js';

/**
 * The table's layout (shards, the time index of each upgrade step, retention): what every
 * repository is built with, apart from email-keys.ts's key writing, so a function that writes no
 * email's keys (a webhook's, a key's, a log's) does not load that code at init.
 */
export interface TableLayout {
  /** Partitions each listing index and the due index spread their emails over. */
  readonly shards: number;
  /** The index listing emails by time: its name changes in the upgrade to keys-only (table.ts). */
  readonly timeIndex: string;
  /** Days an email's items are kept; 0 keeps them until deleted. */
  readonly retentionDays: number;
  /**
   * Set only at upgrade step 1, when the table does not have the search index yet (it comes in
   * step 2: CloudFormation adds one index an update): searches are refused, entries still written.
   */
  readonly searchOff?: true;
}

export const MAX_SHARDS = 256;
/**
 * 32 shards: `emails-by-status` takes two writes per email in the queued shard (in, and out when it
 * settles), so 32 partitions carry 16,000 emails/s, the 10,000 aimed at with room (docs/scale.md).
 */
export const DEFAULT_SHARDS = 32;
export const DEFAULT_RETENTION_DAYS = 30;

export const DEFAULT_LAYOUT: TableLayout = {
  shards: DEFAULT_SHARDS,
  timeIndex: INDEXES.emailsByTime.name,
  retentionDays: DEFAULT_RETENTION_DAYS,
};

/** The layout from the stack's TABLE_LAYOUT (JSON of TableLayout's fields; absent: the defaults). */
export function parseLayout(text: string | undefined): TableLayout {
  if (!text) return DEFAULT_LAYOUT;
  const given = JSON.parse(text) as Partial<TableLayout>;
  const layout = { ...DEFAULT_LAYOUT, ...given };
  const problem = layoutProblem(layout);
  if (problem) throw new Error(`TABLE_LAYOUT: ${problem}`);
  return layout;
}

/** What is wrong with a layout, if anything (the stack checks its settings with it too). */
export function layoutProblem(layout: TableLayout): string | undefined {
  if (!Number.isInteger(layout.shards) || layout.shards < 1 || layout.shards > MAX_SHARDS)
    return `listingShards must be a whole number from 1 to ${MAX_SHARDS}, not ${layout.shards}`;
  if (!Number.isInteger(layout.retentionDays) || layout.retentionDays < 0)
    return `emailRetentionDays must be a whole number of days (0 keeps emails until deleted), not ${layout.retentionDays}`;
  if (layout.timeIndex !== INDEXES.emailsByTime.name && layout.timeIndex !== LEGACY_INDEXES.emailsByTime.name)
    return `unknown time index ${layout.timeIndex}`;
  return undefined;
}

/**
 * The audience clean-up (the `clean-up-audience` worker): what a deleted contact, segment or topic
 * leaves behind (its memberships or choices), removed off the request path, page by page. One run
 * deletes at most MAX_CLEANUP_DELETES items and hands the rest to a job of its own (where it stopped),
 * so a segment of a million is a couple of hundred short runs, none near a function's timeout, and a
 * run that fails part-way is retried from its own job (deleting an item already gone is no fault).
 */
import type { AudienceCleanup, CleanupJob } from './cleanup-jobs.js';
import type { AudienceReads } from './reads.js';

/** At most this many deletes a run (200 BatchWriteItems of 25): a few seconds. */
export const MAX_CLEANUP_DELETES = 5_000;

/** Where the leftovers are (adapters/dynamodb/audience-cleanup-store.ts). */
export interface AudienceCleanupStore {
  /**
   * Deletes up to `max` items of the job, from where it stopped: how many, and the job that
   * carries on from there (none: nothing is left).
   */
  deleteSome(job: CleanupJob, max: number): Promise<{ deleted: number; next?: CleanupJob }>;
}

export interface CleanupDeps {
  readonly store: AudienceCleanupStore;
  /** Where the rest of a job too large for one run goes (the same queue). */
  readonly cleanup: AudienceCleanup;
  /** Deletes a run. @default MAX_CLEANUP_DELETES */
  readonly maxDeletes?: number;
  /**
   * Where the job's owner is looked up first. A deletion queues its job before it deletes (so a
   * failed enqueue leaves nothing behind), so a job may come whose delete then failed: while the
   * contact, segment or topic is still there, its memberships and choices are kept.
   */
  readonly owners: Pick<AudienceReads, 'contactById' | 'segment' | 'topic'>;
}

/** Whether the contact, segment or topic a job cleans up after is still there (read strongly). */
async function ownerStands(owners: CleanupDeps['owners'], job: CleanupJob): Promise<boolean> {
  switch (job.kind) {
    case 'contact':
      return (await owners.contactById(job.contact_id, true)) !== undefined;
    case 'segment':
      return (await owners.segment(job.segment_id)) !== undefined;
    case 'topic':
      return (await owners.topic(job.topic_id)) !== undefined;
  }
}

export async function cleanUpAudience(
  deps: CleanupDeps,
  job: CleanupJob,
): Promise<{ deleted: number; continued: boolean; kept?: true }> {
  if (await ownerStands(deps.owners, job)) return { deleted: 0, continued: false, kept: true };
  const { deleted, next } = await deps.store.deleteSome(job, deps.maxDeletes ?? MAX_CLEANUP_DELETES);
  if (next) await deps.cleanup.enqueue(next);
  return { deleted, continued: next !== undefined };
}

/** A job as the queue carries it (JSON), checked: an unknown shape is refused. */
export function parseCleanupJob(body: string): CleanupJob {
  const job = JSON.parse(body) as Record<string, unknown>;
  const text = (value: unknown) => typeof value === 'string' && value.length > 0;
  const optionalText = (value: unknown) => value === undefined || text(value);
  const optionalShard = (value: unknown) =>
    value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0);
  const valid =
    (job.kind === 'contact' && text(job.contact_id) && optionalText(job.cursor)) ||
    (job.kind === 'segment' &&
      text(job.segment_id) &&
      optionalShard(job.shard) &&
      optionalText(job.cursor)) ||
    (job.kind === 'topic' && text(job.topic_id) && optionalShard(job.shard) && optionalText(job.cursor));
  if (!valid) throw new Error(`not an audience clean-up job: ${body.slice(0, 200)}`);
  return job as unknown as CleanupJob;
}

import type { Counters, Log } from '../shared/ports.js';
import type { WebhookEvent } from './model.js';
import type { EventPublisher, KeptEvent, UnpublishedEvents } from './ports.js';

/**
 * Publishes, late, the events that could not be published when they were raised (publish.ts
 * keeps them when the endpoints could not be read or the delivery queue refused their messages):
 * the requeue-webhook-retries function does it at every run (every minute on AWS, every second
 * locally). A run reads the endpoints once, then, the store's partitions side by side, puts each
 * page's messages on the queue (one per event and endpoint subscribed to its type now) and only
 * then takes the page's events out of the store. So an event is never lost: a step that fails in
 * between publishes it again at the next run, with the same message ids (receivers deduplicate on
 * `webhook-id`).
 */

export interface RepublishDeps {
  /** Where the events wait. */
  unpublished: UnpublishedEvents;
  /** The publisher that reads the endpoints and puts messages on the queue. */
  events: EventPublisher;
  counters?: Counters;
  log?: Log;
}

/** At most this many a run (a page of 100 takes a few SendMessageBatch calls and four deletes). */
export const MAX_REPUBLISHED_PER_RUN = 50_000;
/** A run takes no further page once its invocation has less than this left (its timeout is 60 s). */
export const REPUBLISH_MARGIN_MS = 25_000;

export interface RepublishReport {
  /** Published (their messages on the queue, to the endpoints subscribed now) and taken out. */
  republished: number;
  /** Kept items that were not an event (taken out, and logged). */
  unreadable: number;
}

/**
 * Publishes the kept events, oldest first in each of the store's partitions; `timeLeftMs`: the
 * invocation's time left (absent: bounded by `limit` only). Throws when the endpoints cannot be
 * read or the queue refuses a page: what is left stays kept for the next run.
 */
export async function republishKept(
  deps: RepublishDeps,
  timeLeftMs?: () => number,
  limit = MAX_REPUBLISHED_PER_RUN,
): Promise<RepublishReport> {
  const report: RepublishReport = { republished: 0, unreadable: 0 };
  const partitions = deps.unpublished.keptByPartition(limit);
  const outOfTime = () => timeLeftMs !== undefined && timeLeftMs() < REPUBLISH_MARGIN_MS;
  // The endpoints are read once a run, and only when something is kept.
  let endpoints: ReturnType<EventPublisher['subscriptions']> | undefined;
  const handle = async (page: KeptEvent[]) => {
    const unreadable = page.filter((kept) => !kept.event);
    for (const kept of unreadable)
      deps.log?.error('a kept webhook event is unreadable; dropped', { ref: kept.ref });
    const events = page.flatMap((kept) => (kept.event ? [kept.event] : [])) as WebhookEvent[];
    if (events.length) {
      endpoints ??= deps.events.subscriptions();
      await (await endpoints).publish(events);
    }
    await deps.unpublished.remove(page);
    report.republished += events.length;
    report.unreadable += unreadable.length;
  };
  try {
    await Promise.all(
      partitions.map(async (partition) => {
        if (outOfTime()) return;
        for await (const page of partition) {
          await handle(page);
          if (outOfTime()) break;
        }
      }),
    );
  } finally {
    if (report.republished) deps.counters?.count('WebhookEventsRepublished', report.republished);
  }
  return report;
}

import type { MetricCounts } from '../metrics/model.js';
import type { Counters, Log } from '../shared/ports.js';
import type { BroadcastEnded, BroadcastTally, BroadcastTallyEntry } from './broadcast-tally.js';
import type { EmailContent } from './email.js';
import type { EndingName } from './lifecycle.js';
import { addressKey, recipientsOf, WITHHELD_REASONS } from './recipients.js';

/**
 * Where the emails raise their broadcast's tally (broadcast-tally.ts): from the same news the
 * metrics count (a write that recorded something first), so each outcome is raised once; only for
 * an email with `broadcast_id`. A tally that fails never fails the email's record: it is logged and
 * counted (BroadcastTallyLost), as a lost metric is.
 */
export interface TallyDeps {
  /** The broadcasts' tally (absent: nothing is raised). */
  broadcasts?: BroadcastTally;
  counters?: Counters;
  log?: Log;
}

/** The email an outcome is about, when it is a broadcast's. */
export interface TalliedEmail {
  broadcastId: string | undefined;
  emailId: string;
  /** Its recipient (a broadcast's email has one). */
  address: string | undefined;
}

/** The email as the tally knows it, from its content. */
export const talliedOf = (
  emailId: string,
  content: Pick<EmailContent, 'broadcast_id' | 'to' | 'cc' | 'bcc'>,
): TalliedEmail => ({
  broadcastId: content.broadcast_id,
  emailId,
  address: recipientsOf(content)[0]?.email,
});

/** Raises these to the tally, each by itself; a failure is logged and counted, never thrown. */
export async function raiseTally(
  deps: TallyDeps,
  raised: { record?: readonly BroadcastTallyEntry[]; ended?: BroadcastEnded },
): Promise<void> {
  const { broadcasts } = deps;
  if (!broadcasts) return;
  const calls = [
    ...(raised.record ?? []).map((entry) => ({
      what: entry.type,
      // An outcome is one conditional transaction (adapters/dynamodb/broadcast-tally.ts): made
      // again, it counts at most once, so a failure is tried again before its count is given up.
      // An open or click adds each time: it is not.
      done:
        entry.type === 'opened' || entry.type === 'clicked'
          ? broadcasts.record(entry)
          : again(() => broadcasts.record(entry)),
    })),
    ...(raised.ended ? [{ what: 'ended', done: broadcasts.ended(raised.ended) }] : []),
  ];
  const results = await Promise.allSettled(calls.map((call) => call.done));
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') return;
    deps.counters?.count('BroadcastTallyLost');
    deps.log?.error("could not add to the broadcast's tally; this count is lost", {
      email_id: (raised.record?.[0] ?? raised.ended)?.emailId,
      broadcast_id: (raised.record?.[0] ?? raised.ended)?.broadcastId,
      type: calls[i]?.what,
      error: result.reason,
    });
  });
}

/** Tries a call up to OUTCOME_TRIES times, 100 ms then 400 ms apart; the last failure is thrown. */
async function again(call: () => Promise<void>): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      return await call();
    } catch (error) {
      if (tries >= OUTCOME_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * 4 ** (tries - 1)));
    }
  }
}
const OUTCOME_TRIES = 3;

/** The tally's outcomes of what a write recorded first (the metric counts it made). */
const TALLIED_COUNTS = ['sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked'] as const;

/**
 * Raises what these metric counts say was recorded first (sent, delivered, bounced, complained,
 * each open and click), for a broadcast's email; nothing for another.
 */
export async function tallyCounts(
  deps: TallyDeps,
  email: TalliedEmail,
  at: string,
  counts: MetricCounts,
  detail: { bounceType?: string; link?: string } = {},
): Promise<void> {
  const { broadcastId, emailId, address } = email;
  if (!deps.broadcasts || !broadcastId || !address) return;
  const record = TALLIED_COUNTS.filter((type) => (counts[type] ?? 0) > 0).map(
    (type): BroadcastTallyEntry => ({
      broadcastId,
      emailId,
      address: addressKey(address),
      type,
      at,
      ...(type === 'bounced' ? { bounceType: bounceTypeOf(detail.bounceType) } : {}),
      ...(type === 'clicked' && detail.link !== undefined ? { link: detail.link } : {}),
    }),
  );
  if (record.length) await raiseTally(deps, { record });
}

/** Resend's bounce type of SES's. */
const bounceTypeOf = (type: string | undefined) =>
  type === 'Permanent' ? 'permanent' : type === 'Transient' ? 'transient' : 'undetermined';

/**
 * What an ending tells the tally: an email that never reached SES ended (failed, canceled), or was
 * left out at handover: `suppressed` when the suppression list left it out, `withheld` (an ended
 * one) when the gate did (its contact unsubscribed or opted out of the topic). Endings after SES
 * took the email (a settle, SES's own failure) tell it nothing: its send was counted. Nor does an
 * outcome left unknown (the sweeper's `unknownOutcome`): SES may have the email, and a late Send
 * event would count it `sent` as well, so it would be counted twice.
 */
const ENDED: Partial<Record<EndingName, BroadcastEnded['reason']>> = {
  canceled: 'canceled',
  broadcastCanceled: 'canceled',
  deadLettered: 'failed',
  unsendable: 'failed',
  unsendableGaveUp: 'failed',
  rejected: 'failed',
  gaveUp: 'failed',
};

/** Whether an ending tells the tally anything (so its email need not be read otherwise). */
export const talliedEnding = (ending: EndingName) =>
  ending === 'allSuppressed' || ENDED[ending] !== undefined;

/** Raises an ending of a broadcast's email to its tally (talliedEnding says which do). */
export async function tallyEnding(
  deps: TallyDeps,
  email: TalliedEmail,
  at: string,
  ending: EndingName,
  suppressedReasons: readonly string[] = [],
): Promise<void> {
  const { broadcastId, emailId, address } = email;
  if (!deps.broadcasts || !broadcastId || !address) return;
  const where = { broadcastId, emailId, address: addressKey(address), at };
  if (ending === 'allSuppressed') {
    const listed = suppressedReasons.some((r) => !(WITHHELD_REASONS as readonly string[]).includes(r));
    await raiseTally(
      deps,
      listed ? { record: [{ ...where, type: 'suppressed' }] } : { ended: { ...where, reason: 'withheld' } },
    );
    return;
  }
  const reason = ENDED[ending];
  if (reason) await raiseTally(deps, { ended: { ...where, reason } });
}

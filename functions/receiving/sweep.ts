import { authenticationOf, failedReceiptEvent, type Receipt, receiptsOf, scanVerdictOf } from './events.js';
import type { AuthenticationResult } from './model.js';
import { parseMessage } from './parse.js';
import { type ReceiveDeps, receive } from './receive.js';

/**
 * sweep-received (every 5 minutes): so that no message SES accepted is lost, it hands to the same
 * use case as receive-email (receive.ts)
 * (a) the receipt events of receive-email's invocations that failed for good (Lambda's onFailure
 *     destination, a queue: each message is Lambda's invocation record, whose `requestPayload` is
 *     SES's event), deleting each message once its messages are stored; and
 * (b) the raw messages SES wrote that have no received email once they are older than
 *     RAW_GRACE_MS (their invocation never came, or its failure record was lost): as they have no
 *     receipt event, their verdicts are read from the headers SES adds to the message it writes
 *     (X-SES-Spam-Verdict, X-SES-Virus-Verdict, Authentication-Results) and their recipient from its
 *     Received header; what is not there is `unknown`.
 * Receiving twice is one received email (receive.ts), so a message both paths find is one.
 */

/** The failure destination's queue (adapters/sqs/received-failures.ts). */
export interface FailedReceipts {
  /** Up to `max` (at most 10) messages, hidden from other readers while this run handles them. */
  receive(max: number): Promise<{ handle: string; body: string }[]>;
  remove(handle: string): Promise<void>;
}

/**
 * Where the listing of `received/raw/` stands. SES names raw objects by its message id (random), so
 * the listing's order has nothing to do with their age, and at scale one run cannot list them all
 * (a LIST returns 1,000 keys): each run goes on after the last key the one before looked at, and
 * the pass starts again from the first key once it reaches the last, so every key is looked at
 * however many there are. A pass looks at the keys modified since two passes ago (window_from_ms:
 * the start of the pass before the previous one, less the grace), which a key is in from the first
 * pass that starts once it is past its grace until the one after: two looks each, whatever a pass
 * takes.
 */
export interface RawSweepState {
  /** The last key looked at (none: the pass starts from the first). */
  start_after?: string;
  pass_started_ms: number;
  previous_pass_started_ms: number;
  /** Keys modified before this are left alone by this pass (the passes before looked at them). */
  window_from_ms: number;
}

/** The state between runs (adapters/dynamodb/raw-sweep-cursor.ts: table item `RECEIVING` / `SWEEP`). */
export interface RawSweepCursor {
  read(): Promise<RawSweepState | null>;
  save(state: RawSweepState): Promise<void>;
}

export interface SweepReceivedDeps extends ReceiveDeps {
  failures: FailedReceipts;
  /** Where the raw listing stands between runs; none: each run starts a pass of its own. */
  rawCursor?: RawSweepCursor;
  /** The invocation's time left (ms): the sweep stops taking work with RUN_MARGIN_MS left. */
  timeLeftMs?: () => number;
}

/** Raw messages younger than this are left to receive-email (SES invokes it right after the write). */
export const RAW_GRACE_MS = 15 * 60_000;
/**
 * The raw messages are looked at once an hour (by the run in the first RAW_LOOK_SLOT_MS of each
 * hour: the sweep runs every 5 minutes), as listing them costs a LIST per 1,000 kept; the failure
 * queue, every run.
 */
export const RAW_LOOK_EVERY_MS = 60 * 60_000;
export const RAW_LOOK_SLOT_MS = 5 * 60_000;
/**
 * How far back (beyond the grace) the first pass looks (RawSweepState; later passes look back two
 * passes): two hours, the two hourly looks of a pass that ends within its run.
 */
export const RAW_LOOKBACK_MS = 2 * 60 * 60_000;
export const MAX_FAILURES_PER_RUN = 100;
export const RUN_MARGIN_MS = 20_000;

export interface SweepReport {
  fromFailures: number;
  fromRaw: number;
  errors: number;
}

export async function sweepReceived(deps: SweepReceivedDeps): Promise<SweepReport> {
  const report: SweepReport = { fromFailures: 0, fromRaw: 0, errors: 0 };
  const hasTime = () => (deps.timeLeftMs ? deps.timeLeftMs() > RUN_MARGIN_MS : true);

  // (a) The failure queue.
  for (let taken = 0; taken < MAX_FAILURES_PER_RUN && hasTime(); ) {
    const messages = await deps.failures.receive(10);
    if (!messages.length) break;
    taken += messages.length;
    for (const message of messages) {
      const event = failedReceiptEvent(message.body);
      try {
        for (const receipt of event ? receiptsOf(event) : []) {
          const { created } = await receive(deps, receipt);
          if (created) {
            report.fromFailures++;
            deps.counters?.count('ReceivedSwept');
          }
        }
        if (!event) deps.log?.warn('dropped a failure record that holds no SES receipt event', {});
        await deps.failures.remove(message.handle);
      } catch (error) {
        // Left on the queue: seen again once its visibility ends.
        report.errors++;
        deps.log?.error('could not receive a message from the failure queue', { error });
      }
    }
  }

  // (b) Raw messages with no received email, once an hour, from where the last look stopped.
  const now = deps.clock.now().getTime();
  const olderThan = now - RAW_GRACE_MS;
  if (now % RAW_LOOK_EVERY_MS < RAW_LOOK_SLOT_MS && hasTime()) {
    let state: RawSweepState = (await deps.rawCursor?.read()) ?? {
      pass_started_ms: now,
      previous_pass_started_ms: now - RAW_LOOKBACK_MS,
      window_from_ms: olderThan - RAW_LOOKBACK_MS,
    };
    // Each key at most once a run: a run that wraps to the first key stops there.
    let wrapped = false;
    while (hasTime() && !wrapped) {
      const page = await deps.mail.listRaw(state.start_after, olderThan);
      let stopped = false;
      for (const raw of page.keys) {
        if (!hasTime()) {
          stopped = true;
          break;
        }
        state = { ...state, start_after: raw.key };
        if (raw.lastModifiedMs < state.window_from_ms) continue;
        try {
          if (await deps.received.bySesMessageId(raw.sesMessageId)) continue;
          const receipt = await receiptFromRaw(deps, raw.sesMessageId, raw.lastModifiedMs);
          if (!receipt) continue;
          const { created } = await receive(deps, receipt);
          if (created) {
            report.fromRaw++;
            deps.counters?.count('ReceivedSwept');
          }
        } catch (error) {
          report.errors++;
          deps.log?.error('could not receive a raw message the sweep found', {
            ses_message_id: raw.sesMessageId,
            error,
          });
        }
      }
      if (!stopped) {
        if (page.next) state = { ...state, start_after: page.next };
        else {
          // The last key: the next pass starts from the first.
          const { start_after: _done, ...rest } = state;
          state = {
            ...rest,
            pass_started_ms: now,
            previous_pass_started_ms: rest.pass_started_ms,
            window_from_ms: rest.previous_pass_started_ms - RAW_GRACE_MS,
          };
          wrapped = true;
        }
      }
      await deps.rawCursor?.save(state);
      if (stopped) break;
    }
  }

  if (report.fromFailures || report.fromRaw || report.errors)
    deps.log?.warn('sweep-received found messages receive-email had missed', { ...report });
  return report;
}

/** A receipt for a raw message that came with no event: from the headers SES added to it. */
export async function receiptFromRaw(
  deps: Pick<ReceiveDeps, 'mail'>,
  sesMessageId: string,
  lastModifiedMs: number,
): Promise<Receipt | null> {
  const raw = await deps.mail.readRaw(sesMessageId);
  if (!raw) return null;
  const { headers } = (await parseMessage(raw)).bodies;
  const results = headers['authentication-results'] ?? '';
  const method = (name: string) => results.match(new RegExp(`\\b${name}=([a-z]+)`, 'i'))?.[1]?.toLowerCase();
  const recipient = headers.received?.match(/\bfor <?([^\s<>;]+@[^\s<>;]+)>?;/)?.[1];
  return {
    sesMessageId,
    receivedAt: new Date(lastModifiedMs).toISOString(),
    recipients: recipient ? [recipient] : [],
    authentication: {
      spf: fromAuthenticationResults(method('spf')),
      dkim: fromAuthenticationResults(method('dkim')),
      dmarc: fromAuthenticationResults(method('dmarc')),
    },
    spam: scanVerdictOf(headers['x-ses-spam-verdict']?.trim().toUpperCase()),
    virus: scanVerdictOf(headers['x-ses-virus-verdict']?.trim().toUpperCase()),
  };
}

/** An Authentication-Results method result (RFC 8601) in Resend's terms, as SES's verdicts map. */
function fromAuthenticationResults(result: string | undefined): AuthenticationResult {
  switch (result) {
    case 'pass':
      return 'pass';
    case 'fail':
    case 'softfail':
      return authenticationOf('FAIL');
    case 'none':
    case 'neutral':
    case 'policy':
      return 'gray';
    case 'temperror':
    case 'permerror':
      return 'processing_failed';
    default:
      return 'unknown';
  }
}

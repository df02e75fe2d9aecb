import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type DeliverDeps, type DeliverOutcome, deliverBatch } from '../emails/deliver.js';
import type { DeferredJob, DueJob, EmailQueue, QueuedJob } from '../emails/ports.js';
import { delaySecondsUntil, MAX_QUEUE_DELAY_SECONDS } from '../emails/schedule.js';
import { parseSendJob } from '../emails/send-job.js';
import { logFor, logger } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { consumerDeps } from '../wiring/process-send-queue.js';

export interface ConsumerDeps extends Omit<DeliverDeps, 'time'> {
  /** The queue's maxReceiveCount: on that attempt a failure is final (the message goes to the DLQ). */
  maxReceiveCount: number;
  /**
   * The send queue itself: a scheduled email's message that came before its time goes back,
   * delayed, and so does an email deferred for SES's limits (as a new message: not an attempt).
   */
  queue?: Pick<EmailQueue, 'enqueueMany'>;
  /** What a claim must leave room for (see DeliverDeps.time); the time left is the invocation's. */
  budget?: { sendMs: number; fetchMs: number; marginMs: number };
}

/**
 * The send queue's consumer: delivers each message's email through the mailer, the batch at the
 * account's pace, and reports the messages to retry individually (partial batch response), so one
 * failure never resends the others. An email deferred (SES throttled it, its quota is spent, the
 * shared schedule is full, the invocation's time is short) goes back on the queue as a new message
 * carrying the attempts its messages used: SQS cannot reset a receive count, and a deferral is not
 * an attempt. Its old message is then deleted.
 */
export const makeHandler =
  (deps: ConsumerDeps) =>
  async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    const records = event.Records.map((record) => ({
      record,
      job: parseSendJob(record.body),
      receives: Number(record.attributes.ApproximateReceiveCount ?? '1'),
    }));
    for (const { record, job, receives } of records)
      if (!job) logger.error('unreadable send job', { messageId: record.messageId, attempt: receives });
    const readable = records.filter((r): r is typeof r & { job: QueuedJob } => r.job !== undefined);
    const attemptOf = (r: (typeof readable)[number]) => (r.job.attempts ?? 0) + r.receives;
    // The webhook endpoints are read once a batch (at its first event), not once an email.
    const outcomes = await deliverBatch(
      readOncePerInvocation({
        ...deps,
        ...(context && deps.budget
          ? { time: { left: () => context.getRemainingTimeInMillis(), ...deps.budget } }
          : {}),
      }),
      readable.map((r) => ({ job: r.job, finalAttempt: attemptOf(r) >= deps.maxReceiveCount })),
      // No connection to SES is kept across a freeze (adapters/ses/connections.ts).
    ).finally(() => deps.mailer.closeIdle?.());
    const decisions = readable.map((r, i) =>
      settle(deps, r.job, attemptOf(r), outcomes[i] as DeliverOutcome | Error),
    );
    // What goes back on the queue goes in batches (ten a SendMessageBatch); a message whose job the
    // queue did not take is kept instead, and comes back after its visibility timeout.
    const back = decisions.filter((d): d is DeferredJob | DueJob => typeof d !== 'boolean');
    const notTaken = new Set(
      back.length && deps.queue
        ? await deps.queue.enqueueMany(back).catch((error) => {
            logger.error('could not put deferred emails back on the queue', { error });
            return back.map((job) => job.id);
          })
        : back.map((job) => job.id),
    );
    const done = decisions.map((d) => (typeof d === 'boolean' ? d : !notTaken.has(d.id)));
    const kept = new Set([
      ...records.filter((r) => !r.job).map((r) => r.record.messageId),
      ...readable.filter((_, i) => !done[i]).map((r) => r.record.messageId),
    ]);
    return { batchItemFailures: event.Records.filter((r) => kept.has(r.messageId)).map(itemFailure) };
  };

const itemFailure = (record: SQSRecord) => ({ itemIdentifier: record.messageId });

/**
 * How long an email SES never got the request for (no connection) waits before its next attempt:
 * 5 s, then four times longer each attempt (20 s, 80 s, 320 s), at most SQS's 15 minutes. So a
 * lone failed connection costs seconds, not the visibility timeout (240 s) in flight, and a
 * lasting outage still spreads the attempts over minutes before the email ends `failed`.
 */
export const unreachedRetrySeconds = (attempt: number): number =>
  Math.min(900, 5 * 4 ** Math.max(0, attempt - 1));

/**
 * What becomes of one message: true, deleted (done with); false, kept to be retried; a job, put
 * back on the queue as a new message (then deleted).
 */
function settle(
  deps: ConsumerDeps,
  job: QueuedJob,
  attempt: number,
  outcome: DeliverOutcome | Error,
): boolean | DeferredJob | DueJob {
  // Every line about this message names its email (records of a batch run side by side).
  const log = logFor(job.id);
  if (outcome instanceof Error) {
    // The table failed (the claim, most likely): retried; on the last attempt the message goes to
    // the dead-letter queue, and the sweeper ends the email failed if no attempt ever began.
    log.error('send job failed', { attempt, error: outcome });
    return false;
  }
  (outcome.result === 'unknown' ? log.warn : log.info)('send job', { attempt, ...outcome });
  if (outcome.result === 'not_due') {
    // Due within the queue's longest delay: back on the queue until then. Later than that, it
    // was moved, and the scheduler queues it when it falls due (see emails/scheduler.ts).
    const delaySeconds = delaySecondsUntil(Date.parse(outcome.dueAt), deps.clock.now().getTime());
    if (!deps.queue || delaySeconds >= MAX_QUEUE_DELAY_SECONDS) return true;
    return { id: job.id, content: null, ...(job.key_id ? { key_id: job.key_id } : {}), delaySeconds };
  }
  // A new message carries the claim its receive could not release, if any (its next receive
  // releases it first); the claim this message carried was released before anything else.
  const { unreleased: _released, ...carried } = job;
  const standing = 'unreleased' in outcome && outcome.unreleased ? { unreleased: outcome.unreleased } : {};
  if (outcome.result === 'retry' && outcome.resend && deps.queue)
    // SES never got it (or refused it, and its claim could not be released): a new message, this
    // attempt counted, back within seconds.
    return { ...carried, ...standing, attempts: attempt, delaySeconds: unreachedRetrySeconds(attempt) };
  if (outcome.result === 'deferred')
    return {
      ...carried,
      ...standing,
      // This message's receives before this one were attempts; this one was not.
      attempts: attempt - 1,
      ...(outcome.why === 'rate' ? { throttles: (job.throttles ?? 0) + 1 } : {}),
      delaySeconds: Math.max(1, Math.ceil((outcome.retryAt - deps.clock.now().getTime()) / 1000)),
    };
  // Kept only to be retried, or (given up on) to reach the dead-letter queue for inspection.
  // An unknown outcome is deleted: trying again could send it twice.
  return !(outcome.result === 'retry' || (outcome.result === 'failed' && outcome.gaveUp));
}

export const handler = backgroundHandler(() => makeHandler(consumerDeps()));

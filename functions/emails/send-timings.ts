/**
 * The timings the send pipeline's promise rests on, derived in one place so they cannot drift
 * apart. The CDK stack builds its queues, functions and environment from them (with AWS's values),
 * and so does the local runtime (with its own, shorter ones). `timingProblems` states the
 * invariants: the stack refuses to synthesize when one fails, and the template test checks them
 * again on what was synthesized.
 */
export interface SendTimingInputs {
  /** The send consumer's timeout (s). */
  consumerTimeoutSeconds: number;
  /** The SES events consumer's timeout (s). */
  eventsConsumerTimeoutSeconds: number;
  /** How long the consumer waits to connect to SES, then for its answer (ms; one attempt). */
  sesConnectTimeoutMs: number;
  sesRequestTimeoutMs: number;
  /** The longest fetch of an attachment's `path`, redirects included (ms). */
  fetchTimeoutMs: number;
  /**
   * What a claim leaves room for besides SES's longest answer (and a fetch's): the writes around
   * it, and a file's upload to the content bucket (ms).
   */
  claimMarginMs: number;
  /** A throttled email's first backoff, doubled at each further throttle up to the maximum (ms). */
  throttleBackoffMs: number;
  throttleBackoffMaxMs: number;
  /** While the 24-hour quota is spent or sending paused, emails come back between these (ms). */
  blockedRetryMinMs: number;
  blockedRetryMaxMs: number;
  /** How often the account's sending limits are read again from SES (GetAccount, ms), by one consumer instance for all. */
  accountRefreshMs: number;
  /** The send queue: how long a received message stays hidden (s), and receives before its DLQ. */
  sendVisibilitySeconds: number;
  sendMaxAttempts: number;
  /** The SES events queue. */
  eventsVisibilitySeconds: number;
  eventsMaxAttempts: number;
  /**
   * How its consumer takes events: up to `eventsBatchSize` at once, waiting up to
   * `eventsBatchWindowMs` to gather them (the event source mapping's batch size and batching
   * window). Bigger batches cost fewer invocations, receives and deletes per email, and an email's
   * Send and Delivery events often come in the same one; the window is how much later events may
   * be applied.
   */
  eventsBatchSize: number;
  eventsBatchWindowMs: number;
  /** The configuration set's maximum delivery time (s): every recipient gets a final event within it. */
  maxDeliverySeconds: number;
}

export interface SendTimings extends SendTimingInputs {
  /** The sweeper's bounds (ms), see functions/emails/sweep.ts. */
  requeueAfterMs: number;
  /** How much longer a stranded email waits while the send queue has a backlog it may be in. */
  backlogGraceMs: number;
  unknownOutcomeAfterMs: number;
  finalEventsAfterMs: number;
}

export function sendTimings(inputs: SendTimingInputs): SendTimings {
  return {
    ...inputs,
    // An unsent email's own message may be retried until then.
    requeueAfterMs: inputs.sendMaxAttempts * inputs.sendVisibilitySeconds * 1000,
    backlogGraceMs: 4 * inputs.sendMaxAttempts * inputs.sendVisibilitySeconds * 1000,
    // A Send event may take every retry of the events queue to be recorded; twice that.
    unknownOutcomeAfterMs: 2 * inputs.eventsMaxAttempts * inputs.eventsVisibilitySeconds * 1000,
    // SES stops trying at maxDeliverySeconds; its last events may take a while longer.
    finalEventsAfterMs: (inputs.maxDeliverySeconds + Math.min(3600, inputs.maxDeliverySeconds)) * 1000,
  };
}

/** The invariants, each saying what breaks when it fails. Empty: all hold. */
export function timingProblems(t: SendTimings): string[] {
  const problems: string[] = [];
  if (t.sesConnectTimeoutMs + t.sesRequestTimeoutMs >= t.consumerTimeoutSeconds * 1000)
    problems.push(
      'SES connect + request timeouts must be under the consumer timeout: a hung SendEmail must end before the function is stopped, so its outcome is recorded',
    );
  if (t.requeueAfterMs < t.sendMaxAttempts * t.sendVisibilitySeconds * 1000)
    problems.push(
      'the sweeper may re-queue an unsent email only after maxReceiveCount × visibility timeout: until then its own message may still be retried',
    );
  if (
    t.unknownOutcomeAfterMs <=
    t.eventsMaxAttempts * (t.eventsVisibilitySeconds * 1000 + t.eventsBatchWindowMs)
  )
    problems.push(
      'an unknown outcome may be settled only after every retry of the SES events queue: its Send event may still be on the way',
    );
  if (t.finalEventsAfterMs <= t.maxDeliverySeconds * 1000)
    problems.push(
      'a sent email may be settled without a final event only after SES has stopped trying to deliver it',
    );
  if (
    t.fetchTimeoutMs + t.sesConnectTimeoutMs + t.sesRequestTimeoutMs + 2 * t.claimMarginMs >
    t.consumerTimeoutSeconds * 1000
  )
    problems.push(
      "a path's fetch, SES's longest answer and the writes around them must fit in the consumer's timeout: else an email with a file could never be claimed in time",
    );
  if (t.blockedRetryMaxMs > 900_000 || t.throttleBackoffMaxMs > 900_000)
    problems.push("a deferred email's delay must be at most SQS's longest message delay, 15 minutes");
  if (t.blockedRetryMaxMs >= t.requeueAfterMs)
    problems.push(
      'an email deferred while the quota is spent must come back before the sweeper would take it for stranded',
    );
  return problems;
}

/** The timings as the functions read them, as environment variables: the same on AWS and locally. */
export const timingSettings = (timings: SendTimings) => ({
  SEND_MAX_RECEIVE_COUNT: String(timings.sendMaxAttempts),
  SES_CONNECT_TIMEOUT_MS: String(timings.sesConnectTimeoutMs),
  SES_REQUEST_TIMEOUT_MS: String(timings.sesRequestTimeoutMs),
  SEND_FETCH_TIMEOUT_MS: String(timings.fetchTimeoutMs),
  SEND_CLAIM_MARGIN_MS: String(timings.claimMarginMs),
  SEND_THROTTLE_BACKOFF_MS: String(timings.throttleBackoffMs),
  SEND_THROTTLE_BACKOFF_MAX_MS: String(timings.throttleBackoffMaxMs),
  SEND_BLOCKED_RETRY_MIN_MS: String(timings.blockedRetryMinMs),
  SEND_BLOCKED_RETRY_MAX_MS: String(timings.blockedRetryMaxMs),
  SES_ACCOUNT_REFRESH_MS: String(timings.accountRefreshMs),
  SWEEP_REQUEUE_AFTER_MS: String(timings.requeueAfterMs),
  SWEEP_BACKLOG_GRACE_MS: String(timings.backlogGraceMs),
  SWEEP_UNKNOWN_OUTCOME_AFTER_MS: String(timings.unknownOutcomeAfterMs),
  SWEEP_FINAL_EVENTS_AFTER_MS: String(timings.finalEventsAfterMs),
});

import { Duration } from 'aws-cdk-lib';
import { type SendTimings, sendTimings, timingProblems } from '../functions/emails/send-timings.js';

/**
 * The stack's send pipeline timings (queues, timeouts, the sweeper's bounds), checked against
 * their invariants: a synth with timings that break one fails, naming it.
 */
export function stackTimings(sendMaxAttempts: number): SendTimings {
  // The send consumer's room: a 20 s fetch of a file, SES's 12 s, and the writes around them.
  const consumerTimeout = Duration.seconds(40);
  const eventsConsumerTimeout = Duration.seconds(30);
  const timings = sendTimings({
    consumerTimeoutSeconds: consumerTimeout.toSeconds(),
    eventsConsumerTimeoutSeconds: eventsConsumerTimeout.toSeconds(),
    sesConnectTimeoutMs: 2_000,
    sesRequestTimeoutMs: 10_000,
    fetchTimeoutMs: 20_000,
    claimMarginMs: 3_000,
    // Throttled: 1 s, 2 s, 4 s... up to 5 minutes, jittered. Quota spent or paused: 5 to 15
    // minutes (SES's advice: wait up to 10 minutes), the limits read again every 5 minutes.
    throttleBackoffMs: 1_000,
    throttleBackoffMaxMs: 300_000,
    blockedRetryMinMs: 300_000,
    blockedRetryMaxMs: 900_000,
    accountRefreshMs: 300_000,
    // AWS's advice for a Lambda source: a visibility timeout of six times the function timeout,
    // so a message does not reappear while the invocation that received it still runs.
    sendVisibilitySeconds: consumerTimeout.toSeconds() * 6,
    sendMaxAttempts,
    eventsVisibilitySeconds: eventsConsumerTimeout.toSeconds() * 6,
    eventsMaxAttempts: 5,
    eventsBatchSize: 100,
    eventsBatchWindowMs: 2_000,
    // SES's documented maximum (MaxDeliverySeconds 300–50,400), set so the bound is this stack's own.
    maxDeliverySeconds: Duration.hours(14).toSeconds(),
  });
  const problems = timingProblems(timings);
  if (timings.sendVisibilitySeconds < 6 * timings.consumerTimeoutSeconds)
    problems.push('the send queue visibility timeout must be at least 6 × the consumer timeout');
  if (timings.eventsVisibilitySeconds < 6 * timings.eventsConsumerTimeoutSeconds)
    problems.push('the SES events queue visibility timeout must be at least 6 × its consumer timeout');
  if (problems.length)
    throw new Error(`The send pipeline's timings break its invariants: ${problems.join('; ')}`);
  return timings;
}

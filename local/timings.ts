import { type SendTimings, sendTimings, timingProblems } from '../functions/emails/send-timings.js';

/** The settings of the local service that scale its timings (LocalServiceOptions' own). */
export interface LocalTimingOptions {
  sendRetryDelaySeconds?: number;
  sendMaxAttempts?: number;
  sesRequestTimeoutMs?: number;
  maxDeliverySeconds?: number;
}

/**
 * The stack's timings (send-timings.ts), scaled to a laptop: a refused send is retried after 5 s
 * instead of 3 minutes, SES reports every outcome within a minute instead of 14 hours, so the
 * sweeper's bounds are seconds: an unsent email is re-queued after 25 s, an unknown outcome settled
 * after 20 s, a sent email without final events after 2 minutes.
 */
export function localTimings(options: LocalTimingOptions): SendTimings {
  const sendVisibilitySeconds = options.sendRetryDelaySeconds ?? 5;
  const sendMaxAttempts = options.sendMaxAttempts ?? 5;
  // Back well before the sweeper would take a blocked email for stranded (its re-queue window).
  const blockedRetryMaxMs = Math.min(5_000, (sendMaxAttempts * sendVisibilitySeconds * 1000) / 2);
  const timings = sendTimings({
    consumerTimeoutSeconds: 30,
    eventsConsumerTimeoutSeconds: 30,
    sesConnectTimeoutMs: 1_000,
    sesRequestTimeoutMs: options.sesRequestTimeoutMs ?? 5_000,
    fetchTimeoutMs: 20_000,
    claimMarginMs: 1_000,
    // Throttled: 0.2 s, 0.4 s... up to 5 s; quota spent or paused: 2.5 to 5 s, the limits read
    // again every 2 s: a laptop's minutes.
    throttleBackoffMs: 200,
    throttleBackoffMaxMs: 5_000,
    blockedRetryMinMs: blockedRetryMaxMs / 2,
    blockedRetryMaxMs,
    accountRefreshMs: 2_000,
    sendVisibilitySeconds,
    sendMaxAttempts,
    eventsVisibilitySeconds: 2,
    eventsMaxAttempts: 5,
    eventsBatchSize: 100,
    eventsBatchWindowMs: 250,
    maxDeliverySeconds: options.maxDeliverySeconds ?? 60,
  });
  const problems = timingProblems(timings);
  if (problems.length)
    throw new Error(`Local timings break the send pipeline's invariants: ${problems.join('; ')}`);
  return timings;
}

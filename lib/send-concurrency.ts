/**
 * How many send consumer invocations an SES rate needs, and the synth's warning when
 * `sendConcurrency` is far above it (docs/operations.md, "Sizing sendConcurrency").
 *
 * Every invocation books its batch's slots on one schedule at SES's rate, so a backlog drains at
 * that rate whatever the concurrency. An invocation holds a batch for its slots (sendBatchSize / rate
 * seconds of the schedule) and for what comes around them: SES's answer to its last email, the reads
 * before and the writes after. The schedule stays full while the invocations running together book
 * at least as fast as it runs: N × sendBatchSize / (sendBatchSize / rate + overhead) ≥ rate, so
 * N ≥ 1 + rate × overhead / sendBatchSize. Twice that leaves room for slower answers and batches
 * that come in unevenly. Beyond it, the extra invocations only wait for slots (Lambda bills the
 * wait) and put back the emails whose slots lie past their time (a receive, a new message and a
 * write each).
 */

/** What an invocation spends on a batch besides its slots (s): the bench's send batch (bin/bench/cost.ts). */
export const SEND_BATCH_OVERHEAD_SECONDS = 0.15;

/** The rate the default concurrency (5, at batches of 10) is sized for: the check's rate when none is declared. */
export const UNDECLARED_SES_RATE = 100;

/** How far above the concurrency its rate needs the setting may go before the synth warns. */
export const OVERSIZED_FACTOR = 2;

/** The concurrency that keeps the send schedule full at `ratePerSecond`, with room to spare (at least 2). */
export function sendConcurrencyFor(ratePerSecond: number, batchSize: number): number {
  const least = 1 + (ratePerSecond * SEND_BATCH_OVERHEAD_SECONDS) / batchSize;
  return Math.max(2, Math.ceil(2 * least));
}

/**
 * Why `sendConcurrency` is far above what the SES rate needs, or undefined. The rate is the one
 * declared (`sesSendRate`, else the cap `sesMaxSendRate`); without either, the rate the default
 * concurrency is sized for.
 */
export function oversizedSendConcurrency(settings: {
  sendConcurrency: number;
  sendBatchSize: number;
  sesSendRate?: number;
  sesMaxSendRate?: number;
}): string | undefined {
  const { sendConcurrency, sendBatchSize } = settings;
  const declared = settings.sesSendRate ?? settings.sesMaxSendRate;
  const rate = declared ?? UNDECLARED_SES_RATE;
  const needed = sendConcurrencyFor(rate, sendBatchSize);
  if (sendConcurrency <= OVERSIZED_FACTOR * needed) return undefined;
  const which =
    settings.sesSendRate !== undefined
      ? `sesSendRate ${rate}`
      : declared !== undefined
        ? `sesMaxSendRate ${rate}`
        : `${rate}, as no rate is declared (-c sesSendRate=<your account's rate> declares it)`;
  return (
    `sendConcurrency ${sendConcurrency} is more than ${OVERSIZED_FACTOR} times the ${needed} that SES's rate needs ` +
    `at batches of ${sendBatchSize} (recipients a second: ${which}). Emails go at SES's rate whatever the concurrency: ` +
    'the extra invocations only wait for their slots, billed by Lambda, and put back emails whose slots come too late. ' +
    `Set sendConcurrency=${needed} (docs/operations.md, "Sizing sendConcurrency").`
  );
}

/** A consumer's maximum concurrency, within the SQS event source's bounds, or an error naming the setting. */
export function eventSourceConcurrency(setting: string, value: number, hint?: string): number {
  if (!Number.isInteger(value) || value < 2 || value > 1000)
    throw new Error(
      `${setting} must be a whole number from 2 to 1000 (the SQS event source's maximum concurrency), not ${value}.${hint ? ` ${hint}` : ''}`,
    );
  return value;
}

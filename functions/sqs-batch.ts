import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * Runs `process` on every record of an SQS batch at once and reports the ones it did not finish
 * (false or thrown) as batch item failures, so SQS redelivers only those (ReportBatchItemFailures).
 */
export async function partialBatch(
  event: SQSEvent,
  process: (record: SQSRecord) => Promise<boolean>,
): Promise<SQSBatchResponse> {
  const outcomes = await Promise.all(event.Records.map((record) => process(record).catch(() => false)));
  return {
    batchItemFailures: event.Records.filter((_, i) => !outcomes[i]).map((record) => ({
      itemIdentifier: record.messageId,
    })),
  };
}

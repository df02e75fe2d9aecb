import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { FailedReceipts } from '../../receiving/sweep.js';

/**
 * How long a failure record the sweep took stays hidden from the next run: longer than a run (the
 * sweep's timeout), so two runs never take the same record at once.
 */
export const FAILURE_HIDE_SECONDS = 15 * 60;

/**
 * The failure destination of receive-email's asynchronous invocations (Lambda's onFailure: one
 * invocation record a message), read by sweep-received, which deletes a record once its messages
 * are stored.
 */
export class SqsFailedReceipts implements FailedReceipts {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async receive(max: number) {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: Math.min(10, Math.max(1, max)),
        WaitTimeSeconds: 0,
        VisibilityTimeout: FAILURE_HIDE_SECONDS,
      }),
    );
    return Messages.map((m) => ({ handle: m.ReceiptHandle ?? '', body: m.Body ?? '' }));
  }

  async remove(handle: string): Promise<void> {
    await this.sqs.send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: handle }));
  }
}

import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { BroadcastFanOutQueue } from '../../broadcasts/ports.js';

/** SQS's longest message delay (seconds). */
const MAX_DELAY_SECONDS = 900;

/**
 * The broadcasts' fan-out queue (BROADCAST_FANOUT_QUEUE_URL): one message per step,
 * `{"broadcast_id", "generation"}`, held for the delay asked (at most SQS's 15 minutes; a longer
 * wait is renewed by the step that finds it early). A message delivered twice is harmless: the
 * fan-out's checkpoint is conditioned on the cursor it read.
 */
export class SqsBroadcastFanOutQueue implements BroadcastFanOutQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async next(broadcastId: string, generation: number, delayMs: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify({ broadcast_id: broadcastId, generation }),
        DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000))),
      }),
    );
  }
}

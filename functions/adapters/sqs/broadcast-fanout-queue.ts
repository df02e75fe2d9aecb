import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { BroadcastFanOutQueue } from '../../broadcasts/fan-out-ports.js';

/**
 * The broadcasts' fan-out queue (BROADCAST_FANOUT_QUEUE_URL): one message a step of a broadcast,
 * `{"broadcast_id","generation"}`, held `delayMs` (rounded up to whole seconds, at most SQS's 900:
 * a longer wait is taken in several steps).
 */
export class SqsBroadcastFanOutQueue implements BroadcastFanOutQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async next(broadcastId: string, generation: number, delayMs: number): Promise<void> {
    const delay = Math.min(900, Math.max(0, Math.ceil(delayMs / 1000)));
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify({ broadcast_id: broadcastId, generation }),
        ...(delay > 0 ? { DelaySeconds: delay } : {}),
      }),
    );
  }
}

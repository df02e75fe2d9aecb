import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SendTimings } from '../functions/emails/send-timings.js';
import { ensureQueueWithDlq } from './resources.js';

/**
 * The send queue and, beside it, the broadcast lane (issue 41), locally as the stack makes them
 * (lib/constructs/send-pipeline.ts): both with the send timings' visibility and receives, each with
 * a dead-letter queue of its own.
 */
export async function ensureSendQueues(sqs: SQSClient, timings: SendTimings) {
  const options = {
    maxReceiveCount: timings.sendMaxAttempts,
    visibilityTimeoutSeconds: timings.sendVisibilitySeconds,
  };
  const send = await ensureQueueWithDlq(sqs, 'email-service-send', options);
  const lane = await ensureQueueWithDlq(sqs, 'email-service-broadcast-lane', options);
  return {
    send,
    lane,
    /** The lane's URLs, by the part they play (LocalService.queues). */
    laneUrls: { broadcastLane: lane.queue.url, broadcastLaneDeadLetters: lane.dlq.url },
    /** The variables naming them (the lane consumer, the fan-out, the sweeper read them). */
    laneSettings: {
      BROADCAST_SEND_QUEUE_URL: lane.queue.url,
      BROADCAST_LANE_DEAD_LETTER_QUEUE_URL: lane.dlq.url,
    },
  };
}

export type BroadcastLaneUrls = Awaited<ReturnType<typeof ensureSendQueues>>['laneUrls'];

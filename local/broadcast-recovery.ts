import type { SQSClient } from '@aws-sdk/client-sqs';
import { type createDocumentClient, queryPages } from '../functions/adapters/dynamodb/client.js';
import { keys } from '../functions/adapters/dynamodb/table.js';
import { SqsBroadcastFanOutQueue } from '../functions/adapters/sqs/broadcast-fanout-queue.js';
import { TABLE_NAME } from './resources.js';

/**
 * Locally the fan-out queue lives in memory, so a stop (or a kill) loses each unfinished
 * broadcast's next step, which SQS would have kept on AWS. At a start, every broadcast still
 * scheduled, queued or sending gets a step of its generation again: the fan-out goes on from its
 * checkpoint (a scheduled one's step waits for its time, one already moved on is dropped).
 */
export async function resumeBroadcasts(
  db: ReturnType<typeof createDocumentClient>,
  sqs: SQSClient,
  fanOutQueueUrl: string,
  log?: (message: string, fields?: Record<string, unknown>) => void,
): Promise<number> {
  const queue = new SqsBroadcastFanOutQueue(sqs, fanOutQueueUrl);
  let resumed = 0;
  for await (const items of queryPages(db, {
    TableName: TABLE_NAME,
    ConsistentRead: true,
    KeyConditionExpression: 'pk = :pk',
    FilterExpression: '#status IN (:scheduled, :queued, :sending)',
    ProjectionExpression: 'id, generation',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pk': keys.broadcasts,
      ':scheduled': 'scheduled',
      ':queued': 'queued',
      ':sending': 'sending',
    },
  }))
    for (const item of items) {
      await queue.next(String(item.id), Number(item.generation), 0);
      resumed++;
    }
  if (resumed) log?.('resumed the fan-out of unfinished broadcasts', { resumed });
  return resumed;
}

/**
 * The local SQS's in-flight limit (local/sqs-in-flight.ts), as SQS has it: past the limit a short
 * poll is refused with OverLimit, a long poll answers no messages, and a delayed message is not in
 * flight.
 */
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { DEFAULT_MAX_IN_FLIGHT, maxInFlightOf } from '../../local/sqs-in-flight.js';

let emulators: Emulators;
let sqs: SQSClient;
beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0, sqsMaxInFlight: 3 });
  sqs = new SQSClient({
    endpoint: emulators.sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  await emulators?.stop();
});

const queueWith = async (name: string, messages: number, delaySeconds = 0) => {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '60' } }),
  );
  const url = QueueUrl as string;
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: Array.from({ length: messages }, (_, i) => ({
        Id: String(i),
        MessageBody: `m${i}`,
        DelaySeconds: delaySeconds,
      })),
    }),
  );
  return url;
};
const receive = (url: string, max: number, wait: number) =>
  sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max, WaitTimeSeconds: wait }));

describe('the local SQS in-flight limit', () => {
  it('reads LOCAL_SQS_MAX_IN_FLIGHT, 120,000 by default, and refuses nonsense', () => {
    expect(maxInFlightOf({})).toBe(DEFAULT_MAX_IN_FLIGHT);
    expect(DEFAULT_MAX_IN_FLIGHT).toBe(120_000);
    expect(maxInFlightOf({ LOCAL_SQS_MAX_IN_FLIGHT: '50' })).toBe(50);
    expect(() => maxInFlightOf({ LOCAL_SQS_MAX_IN_FLIGHT: '0' })).toThrow(/LOCAL_SQS_MAX_IN_FLIGHT/);
    expect(() => maxInFlightOf({ LOCAL_SQS_MAX_IN_FLIGHT: 'many' })).toThrow(/LOCAL_SQS_MAX_IN_FLIGHT/);
  });

  it('gives no more than the limit leaves, then refuses a short poll and answers a long one empty', async () => {
    const url = await queueWith('in-flight', 6);
    const first = await receive(url, 2, 0);
    expect(first.Messages).toHaveLength(2);
    // One slot left: a receive of ten gets one.
    const second = await receive(url, 10, 0);
    expect(second.Messages).toHaveLength(1);
    await expect(receive(url, 1, 0)).rejects.toMatchObject({ name: 'OverLimit' });
    const long = await receive(url, 1, 1);
    expect(long.Messages ?? []).toEqual([]);
    // A message deleted leaves flight: the next receive gets one again.
    const handle = first.Messages?.[0]?.ReceiptHandle as string;
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: handle }));
    expect((await receive(url, 10, 0)).Messages).toHaveLength(1);
  });

  it('counts no delayed message as in flight, and each queue on its own', async () => {
    const delayed = await queueWith('delayed', 10, 900);
    const other = await queueWith('other', 3);
    expect((await receive(other, 10, 0)).Messages).toHaveLength(3);
    // Ten delayed on one queue and three in flight on another: the first is under its limit still.
    expect((await receive(delayed, 10, 0)).Messages ?? []).toEqual([]);
    await expect(receive(other, 1, 0)).rejects.toMatchObject({ name: 'OverLimit' });
  });
});

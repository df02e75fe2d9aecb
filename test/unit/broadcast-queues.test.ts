import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsBroadcastFanOutQueue } from '../../functions/adapters/sqs/broadcast-fanout-queue.js';
import { SqsBroadcastLane } from '../../functions/adapters/sqs/broadcast-lane.js';
import type { SendJob } from '../../functions/emails/ports.js';
import { parseFanOutMessage } from '../../functions/handlers/fan-out-broadcast.js';
import { emailContent } from '../support/fakes.js';

/** The broadcasts' two SQS adapters, on the SDK's documented shapes (aws-sdk-client-mock). */
const sqs = mockClient(SQSClient);
beforeEach(() => sqs.reset());
const client = () => new SQSClient({ region: 'us-east-1' });

describe('SqsBroadcastFanOutQueue', () => {
  it('sends {broadcast_id, generation}, held the delay rounded up to whole seconds, at most 900', async () => {
    sqs.on(SendMessageCommand).resolves({});
    const queue = new SqsBroadcastFanOutQueue(client(), 'https://sqs/fanout');
    await queue.next('b1', 3, 0);
    await queue.next('b1', 3, 1_200);
    await queue.next('b1', 3, 3_600_000);
    const inputs = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(inputs.map((i) => i.DelaySeconds)).toEqual([0, 2, 900]);
    expect(inputs.every((i) => i.QueueUrl === 'https://sqs/fanout')).toBe(true);
    const body = JSON.parse(inputs[0]?.MessageBody ?? '');
    expect(body).toEqual({ broadcast_id: 'b1', generation: 3 });
    expect(parseFanOutMessage(inputs[0]?.MessageBody ?? '')).toEqual(body);
    expect(parseFanOutMessage('{"broadcast_id":"b1"}')).toBeUndefined();
    expect(parseFanOutMessage('not json')).toBeUndefined();
  });
});

describe('SqsBroadcastLane', () => {
  const job = (i: number): SendJob => ({ id: `em_${String(i).padStart(26, '0')}`, content: emailContent() });

  it('sends what SQS refused again, until it takes it', async () => {
    let refuse = 2;
    sqs
      .on(SendMessageBatchCommand)
      .callsFake((input: { Entries: { Id: string }[] }) =>
        refuse-- > 0
          ? { Successful: [], Failed: [{ Id: input.Entries[0]?.Id, Code: 'x', SenderFault: false }] }
          : {},
      );
    const lane = new SqsBroadcastLane(client(), 'https://sqs/lane', async () => undefined);
    await lane.enqueue(Array.from({ length: 12 }, (_, i) => job(i)));
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries ?? []);
    // 10 + 2 (each call with one refused), then the two refused, in one call.
    expect(calls.map((entries) => entries.length)).toEqual([10, 2, 2]);
    const sent = new Set(calls.flat().map((entry) => JSON.parse(entry.MessageBody as string).id));
    expect(sent.size).toBe(12);
  });

  it('throws when SQS keeps refusing, so the step fails and its page is redone', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('down'));
    const lane = new SqsBroadcastLane(client(), 'https://sqs/lane', async () => undefined);
    await expect(lane.enqueue([job(1)])).rejects.toThrow(
      'the broadcast lane refused 1 jobs after 4 attempts',
    );
  });
});

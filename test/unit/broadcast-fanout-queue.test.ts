import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsBroadcastFanOutQueue } from '../../functions/adapters/sqs/broadcast-fanout-queue.js';

const sqs = mockClient(SQSClient);
beforeEach(() => sqs.reset());

const queue = () => new SqsBroadcastFanOutQueue(new SQSClient({ region: 'us-east-1' }), 'https://sqs/fanout');

describe('SqsBroadcastFanOutQueue.next', () => {
  it('sends {broadcast_id, generation}, delayed by the whole seconds asked, at most SQS’s 15 minutes', async () => {
    sqs.on(SendMessageCommand).resolves({});
    await queue().next('b-1', 3, 0);
    await queue().next('b-1', 4, 1_500);
    await queue().next('b-2', 1, 3_600_000);
    const sent = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(sent.map((input) => input.QueueUrl)).toEqual(Array(3).fill('https://sqs/fanout'));
    expect(sent.map((input) => JSON.parse(input.MessageBody as string))).toEqual([
      { broadcast_id: 'b-1', generation: 3 },
      { broadcast_id: 'b-1', generation: 4 },
      { broadcast_id: 'b-2', generation: 1 },
    ]);
    expect(sent.map((input) => input.DelaySeconds)).toEqual([0, 2, 900]);
  });
});

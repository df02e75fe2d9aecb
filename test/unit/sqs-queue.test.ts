import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsEmailQueue } from '../../functions/adapters/sqs/email-queue.js';
import type { SendJob } from '../../functions/emails/ports.js';
import { emailContent } from '../support/fakes.js';

const sqs = mockClient(SQSClient);
beforeEach(() => sqs.reset());

const job = (i: number, html = '<p>Hi</p>'): SendJob => ({
  id: `em_${String(i).padStart(26, '0')}`,
  content: emailContent({ subject: `n${i}`, html, text: null }),
});
const queue = () => new SqsEmailQueue(new SQSClient({ region: 'us-east-1' }), 'https://sqs/queue');

describe('SqsEmailQueue.enqueueMany', () => {
  it('sends 100 jobs in 10 SendMessageBatch calls of 10, each message the whole job', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const jobs = Array.from({ length: 100 }, (_, i) => job(i));
    expect(await queue().enqueueMany(jobs)).toEqual([]);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(10);
    const sent = calls.flatMap((call) => call.args[0].input.Entries ?? []);
    expect(sent.map((entry) => JSON.parse(entry.MessageBody as string))).toEqual(jobs);
    for (const call of calls) {
      const ids = call.args[0].input.Entries?.map((entry) => entry.Id);
      expect(new Set(ids).size).toBe(ids?.length);
    }
  });

  it('keeps each call under 256 KiB: large messages go in smaller batches', async () => {
    sqs.on(SendMessageBatchCommand).resolves({});
    // Just under the size a job travels whole at (send-job.ts): 5 of them exceed one call.
    const big = 'x'.repeat(55 * 1024);
    await queue().enqueueMany([job(1, big), job(2, big), job(3, big), job(4, big), job(5, big), job(6)]);
    const sizes = sqs
      .commandCalls(SendMessageBatchCommand)
      .map((call) =>
        (call.args[0].input.Entries ?? []).reduce(
          (sum, e) => sum + Buffer.byteLength(e.MessageBody ?? ''),
          0,
        ),
      );
    expect(sizes.every((size) => size <= 256 * 1024)).toBe(true);
    expect(sizes.length).toBeGreaterThanOrEqual(2);
  });

  it('reports the jobs SQS did not take, and every job of a call that failed', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Failed: [{ Id: '3', SenderFault: false, Code: 'InternalError' }] })
      .rejectsOnce(new Error('socket hang up'));
    const jobs = Array.from({ length: 12 }, (_, i) => job(i));
    const left = await queue().enqueueMany(jobs);
    expect(left.sort()).toEqual([jobs[3]?.id, jobs[10]?.id, jobs[11]?.id].sort());
  });
});

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { DynamoSendPacer } from '../../functions/adapters/dynamodb/send-pacer.js';
import { durationMs, pacedRate } from '../../functions/shared/pacing.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
afterAll(() => table?.stop());
beforeEach(async () => {
  await table?.stop();
  table = await startTestTable();
});

/** A pacer as one function instance builds it, on its own client, counting its writes and reads. */
function instance() {
  const client = new DynamoDBClient({
    endpoint: table.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const calls = { writes: 0, reads: 0 };
  client.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => {
      if (context.commandName === 'UpdateItemCommand') calls.writes++;
      if (context.commandName === 'GetItemCommand') calls.reads++;
      return next(args);
    }) as never,
    { step: 'initialize', name: 'count' },
  );
  return { pacer: new DynamoSendPacer(createDocumentClient(client), table.tableName), calls };
}

describe('the shared send schedule (dynalite)', () => {
  it('books back to back: the first batch starts now, each next one where the last ends', async () => {
    const { pacer } = instance();
    const now = 1_000_000;
    expect(await pacer.reserve(700, now, now + 60_000)).toEqual({ startAt: now });
    expect(await pacer.reserve(300, now + 10, now + 60_000)).toEqual({ startAt: now + 700 });
    expect(await pacer.reserve(500, now + 20, now + 60_000)).toEqual({ startAt: now + 1000 });
    // Idle since: the next batch starts at its own now.
    expect(await pacer.reserve(100, now + 5000, now + 60_000)).toEqual({ startAt: now + 5000 });
  });

  it('never books one moment twice, however many instances book at once', async () => {
    const instances = Array.from({ length: 6 }, instance);
    const now = Date.now();
    const booked = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (instances[i % instances.length] as ReturnType<typeof instance>).pacer.reserve(
          100,
          now,
          now + 60_000,
        ),
      ),
    );
    const starts = booked.map((b) => ('startAt' in b ? b.startAt : Number.NaN)).sort((a, b) => a - b);
    // Thirty slots of 100 ms, back to back from now: no overlap, no gap.
    expect(starts).toEqual(Array.from({ length: 30 }, (_, i) => now + i * 100));
  });

  it('books nothing beyond the latest start a batch can wait for, and says how far it is booked', async () => {
    const { pacer } = instance();
    const now = 2_000_000;
    await pacer.reserve(10_000, now, now + 60_000);
    expect(await pacer.reserve(1000, now, now + 5_000)).toEqual({ busyUntil: now + 10_000 });
    // Nothing was booked by the refused batch: the next that may wait starts where the first ends.
    const other = instance().pacer;
    expect(await other.reserve(1000, now, now + 60_000)).toEqual({ startAt: now + 10_000 });
  });

  it('keeps fractions of a millisecond: 100 batches of 40 at SES 20,000/s book 202.1 ms back to back, 19,790 emails a second', async () => {
    const instances = Array.from({ length: 5 }, instance);
    const duration = durationMs(40, pacedRate(20_000));
    const now = 4_000_000;
    const starts: number[] = [];
    for (let i = 0; i < 100; i++) {
      const booked = await (instances[i % instances.length] as ReturnType<typeof instance>).pacer.reserve(
        duration,
        now,
        now + 60_000,
      );
      starts.push('startAt' in booked ? booked.startAt : Number.NaN);
    }
    starts.forEach((at, i) => {
      expect(at).toBeCloseTo(now + i * duration, 6);
    });
    const seconds = ((starts.at(-1) as number) + duration - now) / 1000;
    expect((100 * 40) / seconds).toBeGreaterThanOrEqual(19_700);
  });

  it('costs one write a batch while sending goes on, and while it is idle', async () => {
    const { pacer, calls } = instance();
    let now = 3_000_000;
    for (let i = 0; i < 20; i++) await pacer.reserve(100, now + i * 50, now + 60_000);
    expect(calls).toEqual({ writes: 20, reads: 0 });
    // Idle between batches (each after the last ended): one write each too.
    now += 100_000;
    calls.writes = 0;
    for (let i = 0; i < 10; i++) await pacer.reserve(100, now + i * 1000, now + 60_000);
    expect(calls).toEqual({ writes: 10, reads: 0 });
  });
});

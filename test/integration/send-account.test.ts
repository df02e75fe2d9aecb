import { GetAccountCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoSendQuotaStore } from '../../functions/adapters/dynamodb/send-pacer.js';
import { SesSendQuota } from '../../functions/adapters/ses/account.js';
import { SendingLimits } from '../../functions/shared/pacing.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * The account's SES limits read once for every send consumer instance: each instance builds its
 * limits as on AWS (its own SES client, GetAccount's documented answer from aws-sdk-client-mock,
 * the store beside the schedule in dynalite), on one clock that moves only when they wait.
 */
const ses = mockClient(SESv2Client);
const account = (maxSendRate: number) => ({
  SendQuota: { MaxSendRate: maxSendRate, Max24HourSend: 10_000_000, SentLast24Hours: 0 },
  SendingEnabled: true,
  ProductionAccessEnabled: true,
});
const throttled = Object.assign(new Error('Maximum sending rate exceeded.'), {
  name: 'TooManyRequestsException',
});

let table: TestTable;
afterAll(() => table?.stop());
beforeEach(async () => {
  ses.reset();
  await table?.stop();
  table = await startTestTable();
});

/** `size` instances sharing one store and one clock (a wait moves it to the waiter's end). */
function fleet(size: number, time: { now: number }) {
  return Array.from(
    { length: size },
    () =>
      new SendingLimits(new SesSendQuota(new SESv2Client({ region: 'us-east-1' })), {
        refreshMs: 300_000,
        blockedRecheckMs: 300_000,
        store: new DynamoSendQuotaStore(table.db, table.tableName),
        clock: () => time.now,
        sleep: async (ms) => {
          const until = time.now + ms;
          await new Promise((resolve) => setImmediate(resolve));
          time.now = Math.max(time.now, until);
        },
      }),
  );
}
const calls = () => ses.commandCalls(GetAccountCommand).length;

describe('one GetAccount for every send consumer instance (dynalite, aws-sdk-client-mock)', () => {
  it('while GetAccount fails and no rate was ever read, no instance paces at a guessed rate: each batch waits, then is told it is unknown; the fleet calls SES at most once a second, and once SES answers, one call serves every instance', async () => {
    ses.on(GetAccountCommand).rejects(throttled);
    const time = { now: 1_000_000 };
    const instances = fleet(10, time);
    const started = time.now;
    const limits = await Promise.all(instances.map((l) => l.current(time.now)));
    expect(limits).toEqual(instances.map(() => ({ blocked: 'unknown' })));
    expect(calls()).toBeGreaterThanOrEqual(1);
    expect(calls()).toBeLessThanOrEqual(1 + Math.floor((time.now - started) / 1000));
    // SES answers again: after the last failed read's claim, the first instance to claim reads it
    // for all; the others take it from the store.
    ses.reset();
    ses.on(GetAccountCommand).resolves(account(20_000));
    time.now += 2_000;
    const recovered = await Promise.all(instances.map((l) => l.current(time.now)));
    expect(recovered).toEqual(instances.map(() => ({ ratePerSecond: 20_000 })));
    expect(calls()).toBe(1);
  });

  it('a refresh that fails leaves every instance on the stored rate (never 1 a second), and the next claim reads the new one', async () => {
    ses.on(GetAccountCommand).resolves(account(14));
    const time = { now: 2_000_000 };
    const instances = fleet(10, time);
    expect(await Promise.all(instances.map((l) => l.current(time.now)))).toEqual(
      instances.map(() => ({ ratePerSecond: 14 })),
    );
    expect(calls()).toBe(1);
    // Five minutes on, the read is due: one instance claims it, and it fails.
    ses.reset();
    ses.on(GetAccountCommand).rejects(throttled);
    time.now += 300_000;
    expect(await Promise.all(instances.map((l) => l.current(time.now)))).toEqual(
      instances.map(() => ({ ratePerSecond: 14 })),
    );
    await vi.waitFor(() => expect(calls()).toBe(1));
    // Within its claim nobody tries again; after it, one does, and SES has raised the rate.
    time.now += 1_000;
    await Promise.all(instances.map((l) => l.current(time.now)));
    expect(calls()).toBe(1);
    ses.on(GetAccountCommand).resolves(account(50));
    time.now += 1_000;
    await Promise.all(instances.map((l) => l.current(time.now)));
    await vi.waitFor(() => expect(calls()).toBe(2));
    // Each instance copies the stored limits within 10 s.
    time.now += 10_000;
    await vi.waitFor(async () =>
      expect(await Promise.all(instances.map((l) => l.current(time.now)))).toEqual(
        instances.map(() => ({ ratePerSecond: 50 })),
      ),
    );
    expect(calls()).toBe(2);
  });
});

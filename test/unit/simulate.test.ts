import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { importOf, segmentListing, writeUnitsPerContact } from '../../bin/simulate/audience.js';
import {
  BROADCAST_FIGURES,
  broadcastCostPerThousand,
  broadcastTimes,
  MILLION,
  totalOfLines,
  totalsPartitionWrites,
  writeUnitsPerBroadcastEmail,
} from '../../bin/simulate/broadcast.js';
import {
  callTotalsAt,
  costPerThousand,
  DEFAULT_SETUP,
  FIGURES,
  type Figures,
  RECEIPTS,
  RECOMMENDED_SETUP,
  requestLogStoredBytes,
  requestLogWriteUnits,
  schedulePacing,
  simulate,
  stages,
  storedGigabytes,
} from '../../bin/simulate/model.js';
import {
  chunksOf,
  floodCost,
  RECEIVING_FIGURES,
  receivingCostPerThousand,
  SPAM,
  sesPartOf,
  TYPICAL_RECEIVED,
  totalOf,
} from '../../bin/simulate/receiving.js';
import { AUDIENCE_QUEUES } from '../../functions/shared/audience-queues.js';

const at = (emailsPerSecond: number, extra = {}) => ({ ...RECEIPTS, ...extra, emailsPerSecond });

describe('npm run simulate (the model)', () => {
  it("puts one sender domain's metrics counters at 64 shards × 1,000 / 2 writes: 32,000 emails/s, no ceiling at 10,000/s", () => {
    const counters = stages(RECOMMENDED_SETUP, at(10_000)).find((s) => s.id === 'metrics-counters');
    expect(counters?.capacity).toBe(32_000);
    expect(simulate(RECOMMENDED_SETUP, at(10_000)).ceilings.map((s) => s.id)).not.toContain(
      'metrics-counters',
    );
    expect(simulate(RECOMMENDED_SETUP, at(100_000)).ceilings.map((s) => s.id)).toContain('metrics-counters');
  });

  it('finds the default settings stopped far below 10,000/s, first by SES, then by the stage throttle', () => {
    for (const load of [1_000, 10_000, 100_000]) {
      const found = simulate(DEFAULT_SETUP, at(load));
      expect(found.firstCeiling?.id).toBe('ses-rate');
      // SES's 14 a second, as the schedule carries it: booked 1 % under, to the microsecond.
      expect(found.firstCeiling?.capacity).toBeCloseTo(14 * 0.99, 3);
      expect(found.ceilings[1]?.id).toBe('api-stage');
    }
  });

  it('finds the recommended settings carrying 1,000/s and 10,000/s, and names the first ceiling at 100,000/s', () => {
    expect(simulate(RECOMMENDED_SETUP, at(1_000)).firstCeiling).toBeUndefined();
    const ten = simulate(RECOMMENDED_SETUP, at(10_000));
    expect(ten.firstCeiling).toBeUndefined();
    expect(ten.utilisation).toBeLessThan(1);
    const hundred = simulate(RECOMMENDED_SETUP, at(100_000));
    expect(hundred.firstCeiling?.capacity).toBeLessThan(100_000);
    expect(hundred.ceilings.map((s) => s.id)).toEqual(
      expect.arrayContaining(['api-stage', 'sns-publish', 'index-by-status', 'table-writes', 'ses-rate']),
    );
  });

  it("puts the send schedule's ceiling at 1,000 writes/s × sendBatchSize: right at 10,000/s with batches of 10", () => {
    const pace = (sendBatchSize: number) =>
      stages({ ...RECOMMENDED_SETUP, sendBatchSize }, at(10_000)).find((s) => s.id === 'send-schedule')
        ?.capacity;
    expect(pace(10)).toBe(10_000);
    expect(pace(20)).toBe(20_000);
  });

  it('puts what the send schedule carries at SES 20,000/s at 19,700/s or more (99.5 % of the 19,800 it paces at), its item under 60 % of its writes in batches of 40, and at SES 1,000/s at 985/s or more', () => {
    const full = schedulePacing(20_000, 40);
    expect(full.carried).toBeGreaterThanOrEqual(0.995 * full.paced);
    expect(full.carried).toBeGreaterThanOrEqual(19_700);
    expect(full.itemShare).toBeLessThan(0.6);
    // Batches of 20 carry the rate as well (whole milliseconds carried 10,000/s), at 99 % of the item.
    expect(schedulePacing(20_000, 20).carried).toBeGreaterThanOrEqual(19_700);
    expect(schedulePacing(20_000, 20).itemShare).toBeGreaterThan(0.6);
    expect(schedulePacing(1_000, 10).carried).toBeGreaterThanOrEqual(0.995 * 990);
    // The SES stage is what the schedule carries at its rate, not the rate itself.
    const ses = stages(RECOMMENDED_SETUP, at(10_000)).find((s) => s.id === 'ses-rate');
    expect(ses?.capacity).toBe(schedulePacing(20_000, RECOMMENDED_SETUP.sendBatchSize).carried);
    expect(ses?.capacity).toBeLessThan(20_000);
  });

  it("puts the listing indexes' ceilings at listingShards × 500 and × 1,000", () => {
    const capacity = (id: string) =>
      stages({ ...RECOMMENDED_SETUP, listingShards: 64 }, at(10_000)).find((s) => s.id === id)?.capacity;
    expect(capacity('index-by-status')).toBe(32_000);
    expect(capacity('index-by-time')).toBe(64_000);
  });

  it("puts the request logs' table partitions at 16 shards × 1,000 write units (× 100 emails a request for batches), and charges each logged request its item, an error's status index entry, its line and its storage", () => {
    const logs = (emailsPerRequest: number) =>
      stages(RECOMMENDED_SETUP, at(10_000, { emailsPerRequest })).find((s) => s.id === 'request-logs')
        ?.capacity;
    expect(logs(1)).toBe(16_000);
    expect(logs(100)).toBe(1_600_000);
    const cost = (f: Figures, item: string) =>
      costPerThousand(RECOMMENDED_SETUP, at(10_000), f).find((l) => l.item.startsWith(item))?.onDemand ?? 0;
    // At full batches a receipt's log is 1 write unit, and 2 % of requests add a status index entry.
    expect(requestLogWriteUnits()).toBe(1);
    const ingestion =
      cost(FIGURES, 'CloudWatch Logs') - cost({ ...FIGURES, requestLogLineBytes: 0 }, 'CloudWatch Logs');
    expect(ingestion).toBeCloseTo((FIGURES.requestLogLineBytes * 0.5 * 1000) / 1024 ** 3, 12);
    const storage = (requestLogStoredBytes() / 1024 ** 3) * (30 / (365 / 12)) * 0.45 * 1000;
    expect(storedGigabytes(RECOMMENDED_SETUP, at(1))).toBeGreaterThan(
      (86_400 * 30 * (FIGURES.storedBytesPerEmail + requestLogStoredBytes() - 1)) / 1024 ** 3,
    );
    // In all (write units, their line's ingestion, their storage): under $0.002 per 1,000 emails.
    const writes = (requestLogWriteUnits() + FIGURES.requestLogErrorShare) * 0.625e-3;
    expect(writes + ingestion + storage).toBeLessThan(0.002);
  });

  it("sums its write and read units from calls.ts's per-call terms at full batches (the terms the bench holds)", () => {
    for (const load of [1_000, 10_000]) {
      const calls = callTotalsAt(RECOMMENDED_SETUP, load);
      const writes =
        costPerThousand(RECOMMENDED_SETUP, at(load)).find((l) => l.item === 'DynamoDB writes')?.onDemand ?? 0;
      expect(writes / (0.625 * 1e-3)).toBeCloseTo(calls.writeUnits + FIGURES.requestLogErrorShare, 9);
      const reads =
        costPerThousand(RECOMMENDED_SETUP, at(load)).find((l) => l.item === 'DynamoDB reads')?.onDemand ?? 0;
      expect(reads / (0.125 * 1e-3)).toBeCloseTo(calls.readUnits, 9);
    }
  });

  it('reads the webhook endpoints once a batch: 1 / sendBatchSize + 2 / 100 an email, 42,857/s at batches of 20', () => {
    const reads = stages(RECOMMENDED_SETUP, at(10_000)).find((s) => s.id === 'webhook-endpoint-reads');
    expect(reads?.capacity).toBeCloseTo(3_000 / (1 / 20 + 2 / 100), 6);
  });

  it("puts one webhook endpoint's message log at 64 shards × 1,000 / 2.5 messages/s, whatever webhookConcurrency is", () => {
    const found = simulate(
      { ...RECOMMENDED_SETUP, webhookConcurrency: 1_000 },
      at(10_000, { webhookEndpoints: 1 }),
    );
    // 64 shards × 1,000 writes/s ÷ 2.5 a message ÷ 2 messages an email: 12,800/s, past 10,000.
    const log = stages(RECOMMENDED_SETUP, at(10_000, { webhookEndpoints: 1 })).find(
      (s) => s.id === 'webhook-log',
    );
    expect(log?.capacity).toBe(12_800);
    expect(found.ceilings.map((s) => s.id)).not.toContain('webhook-log');
    const past = simulate(RECOMMENDED_SETUP, at(20_000, { webhookEndpoints: 1 }));
    expect(past.ceilings.map((s) => s.id)).toContain('webhook-log');
  });

  it('costs about two cents per 1,000 emails on demand (request logs included) at 10,000/s, less with provisioned capacity, storage included', () => {
    const lines = costPerThousand(RECOMMENDED_SETUP, at(10_000));
    const total = (key: 'onDemand' | 'provisioned') => lines.reduce((sum, l) => sum + l[key], 0);
    expect(total('onDemand')).toBeGreaterThan(0.01);
    // About two cents with each request logged (its line ingested, its item and index entries).
    expect(total('onDemand')).toBeLessThan(0.025);
    expect(total('provisioned')).toBeLessThan(total('onDemand'));
    expect(lines.find((l) => l.item.startsWith('Storage'))?.onDemand).toBeGreaterThan(0.001);
  });

  it('runs as npm run simulate, printing the ceilings and the cost', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'simulate'], { timeout: 60_000 });
    expect(stdout).toContain('**First ceiling: receipts, no webhook endpoint**');
    expect(stdout).toMatch(/\| 10,000\/s \| SES, account send rate at 13.86\/s/);
    expect(stdout).toMatch(
      /\| 20,000\/s \| 40 \| 19,800\/s \| 19,792.1\/s \| 99.96 % \| 494.8 \| 49.48 % \|/,
    );
    expect(stdout).toContain("Webhook message log (an endpoint's shards)");
    expect(stdout).toContain('**Cost per 1,000 emails at 10,000/s');
    expect(stdout).toMatch(/\| SES, 256 KB chunks \| \$0\.0900 \| \$0\.0900 \| 1 chunk × \$0\.09\/1,000 \|/);
    expect(stdout).toContain('**A flood of 1,000 spam messages a minute**');
    expect(stdout).toMatch(/\| a day \| 1,440,000 \| \$\d{3}\.\d\d \| \$273\.60 \|/);
    expect(stdout).toContain('**A broadcast to 1,000,000 contacts**');
    expect(stdout).toMatch(
      /\| 14\/s \| 50,000 \| 14\/s \| SES's 24-hour quota \| 19\.0 days \| 19\.0 days \|/,
    );
  }, 60_000);
});

describe('npm run simulate (receiving)', () => {
  const line = (lines: ReturnType<typeof receivingCostPerThousand>, item: string) =>
    lines.find((l) => l.item.startsWith(item))?.dollars ?? Number.NaN;

  it("charges SES's $0.10 per 1,000 messages and $0.09 per 1,000 chunks of 256 KB, a part of a chunk counting whole", () => {
    expect(chunksOf(1)).toBe(1);
    expect(chunksOf(256 * 1024)).toBe(1);
    expect(chunksOf(256 * 1024 + 1)).toBe(2);
    expect(chunksOf(40 * 1024 * 1024)).toBe(160);
    const small = receivingCostPerThousand(SPAM);
    expect(line(small, 'SES, messages')).toBeCloseTo(0.1, 12);
    expect(line(small, 'SES, 256 KB')).toBeCloseTo(0.09, 12);
    expect(sesPartOf(small)).toBeCloseTo(0.19, 12);
    // A 30 MB message: 120 chunks, $10.80 per 1,000 of them for the chunks alone.
    const big = receivingCostPerThousand({ ...TYPICAL_RECEIVED, messageBytes: 30 * 1024 * 1024 });
    expect(line(big, 'SES, 256 KB')).toBeCloseTo(120 * 0.09, 9);
  });

  it("counts S3's requests (SES's raw write, the parser's read, parsed.json, one PUT per attachment) and the table's claim, item, notified mark and received count", () => {
    const typical = receivingCostPerThousand(TYPICAL_RECEIVED);
    expect(line(typical, 'S3 requests')).toBeCloseTo(3 * 0.005 + 0.0004, 12);
    expect(line(receivingCostPerThousand(SPAM), 'S3 requests')).toBeCloseTo(2 * 0.005 + 0.0004, 12);
    // 4 write units of its own and the webhook message's 2.5; the endpoints' read and the delivery's.
    expect(line(typical, 'DynamoDB')).toBeCloseTo((6.5 * 0.625 + 1.1 * 0.125) / 1000, 12);
    const none = receivingCostPerThousand({ ...TYPICAL_RECEIVED, webhookEndpoints: 0 });
    expect(line(none, 'DynamoDB')).toBeCloseTo((4 * 0.625 + 1 * 0.125) / 1000, 12);
    expect(line(none, 'SQS')).toBe(0);
    // receive-email: one invocation a message at its memory for its time.
    expect(line(none, 'Lambda')).toBeCloseTo(
      (0.2e-6 + RECEIVING_FIGURES.receiveMemoryGb * RECEIVING_FIGURES.receiveSeconds * 0.0000133334) * 1000,
      12,
    );
  });

  it("puts SES at most of it: about $0.21 per 1,000 small messages, $0.19 of it SES's", () => {
    const total = totalOf(receivingCostPerThousand(SPAM));
    expect(total).toBeGreaterThan(0.19);
    expect(total).toBeLessThan(0.23);
    expect(sesPartOf(receivingCostPerThousand(SPAM)) / total).toBeGreaterThan(0.85);
  });

  it('costs a flood of 1,000 spam messages a minute per hour, day and 30 days: 60,000, 1.44 million and 43.2 million messages', () => {
    const flood = floodCost(1_000);
    expect(flood.hour.messages).toBe(60_000);
    expect(flood.day.messages).toBe(1_440_000);
    expect(flood.month.messages).toBe(43_200_000);
    expect(flood.hour.ses).toBeCloseTo(60_000 * 0.00019, 6);
    expect(flood.day.ses).toBeCloseTo(273.6, 6);
    expect(flood.month.ses).toBeCloseTo(8_208, 6);
    expect(flood.day.total).toBeCloseTo(1_440_000 * flood.perMessage, 6);
    expect(flood.day.total).toBeGreaterThan(flood.day.ses);
    // No ceiling: a few executions and about a hundred write units a second.
    expect(flood.concurrency).toBeLessThan(10);
    expect(flood.writeUnitsPerSecond).toBeCloseTo((1_000 / 60) * 6.5, 9);
  });
});

describe('npm run simulate (the audience)', () => {
  it('counts a contact, its memberships and choices as items of their own: 2 writes each in a transaction, 1 for each index entry', () => {
    expect(writeUnitsPerContact({ segments: 0, topics: 0 })).toEqual({
      items: 2,
      transactional: 5,
      plain: 3,
    });
    expect(writeUnitsPerContact({ segments: 1, topics: 1 })).toEqual({
      items: 4,
      transactional: 11,
      plain: 7,
    });
    // A contact in many segments grows by a fixed amount a segment: no item grows.
    const many = writeUnitsPerContact({ segments: 50, topics: 0 });
    expect(many.transactional - writeUnitsPerContact({ segments: 49, topics: 0 }).transactional).toBe(3);
  });

  it('imports a million rows within the transaction limit, the worker’s timeout and the shards’ write rate', () => {
    for (const shape of [
      { segments: 0, topics: 0 },
      { segments: 1, topics: 1 },
      { segments: 3, topics: 2 },
    ]) {
      const run = importOf(1_000_000, shape);
      // A chunk's items and its checkpoint in one TransactWriteItems of at most 100 actions.
      expect(run.rowsPerTransaction * writeUnitsPerContact(shape).items + 1).toBeLessThanOrEqual(100);
      // Each step ends before the worker's timeout; the index partitions are no ceiling.
      expect(run.seconds / run.steps).toBeLessThan(AUDIENCE_QUEUES.contactImports.timeoutSeconds);
      expect(run.shardHeadroom).toBeGreaterThan(1);
    }
    expect(Math.round(importOf(1_000_000, { segments: 1, topics: 1 }).seconds / 60)).toBe(24);
  });

  it('lists a million-member segment page by page, each page the same reads whatever the segment’s size', () => {
    const million = segmentListing(1_000_000);
    expect(million.pages).toBe(10_000);
    expect(segmentListing(1_000).readUnitsPerPage).toBe(million.readUnitsPerPage);
    expect(million.cost).toBeLessThan(0.5);
  });
});

describe('npm run simulate (a broadcast)', () => {
  it('sends a million at the rate SES leaves it: waits for the 24-hour quota, or is bound by the fan-out one page at a time', () => {
    // 14/s and 50,000 a day (a new production account): 19 days of waiting, then the last 50,000.
    const quota = broadcastTimes({ ...MILLION, sesRate: 14, quota24h: 50_000 });
    expect(quota.bound).toBe("SES's 24-hour quota");
    expect(quota.sendSeconds).toBeCloseTo(19 * 86_400 + 50_000 / 14, 0);
    // 100/s, a quota of a million: the rate, 10,000 s; the fan-out done a minute before the last send.
    const paced = broadcastTimes({ ...MILLION, sesRate: 100, quota24h: 1_000_000 });
    expect(paced).toMatchObject({ bound: "SES's rate", rate: 100, sendSeconds: 10_000 });
    expect(paced.fanOutSeconds).toBe(10_000 - BROADCAST_FIGURES.aheadSeconds);
    // Transactional mail goes first: what it takes of the rate the broadcast does without.
    expect(broadcastTimes({ ...MILLION, sesRate: 100, transactionalShare: 0.5 }).sendSeconds).toBe(20_000);
    // One fan-out page at a time: 100 contacts a page every 250 ms (assumed) carries 400/s.
    const fast = broadcastTimes({ ...MILLION, sesRate: 10_000 });
    expect(fast).toMatchObject({ bound: 'the fan-out', rate: 400, sendSeconds: 2_500 });
    // The broadcast's own partition (its totals' sort keys): 2 units an email, 800 a second of its 1,000.
    expect(totalsPartitionWrites({ ...MILLION, sesRate: 10_000 })).toBe(800);
    expect(totalsPartitionWrites({ ...MILLION, sesRate: 100 })).toBe(200);
  });

  it("counts an email's write units from the code's writes: createMany's items and index entries, the lane's, the events', the tally's and the counters'", () => {
    const { terms, total } = writeUnitsPerBroadcastEmail(MILLION);
    const term = (prefix: string) => terms.find(([name]) => name.startsWith(prefix))?.[1];
    // A 12 KB body deflated to a quarter, with its keys: 3,200 bytes, 4 units.
    expect(term('createMany: body')).toBe(4);
    expect(term('createMany: status')).toBe(3);
    expect(term('tally: sent')).toBe(2);
    expect(total).toBeCloseTo(21.11, 2);
    // Tracked: an open 4 units (event, counter, tally's 2), a click 6.
    const tracked = writeUnitsPerBroadcastEmail({ ...MILLION, opensPerEmail: 1, clicksPerEmail: 1 });
    expect(tracked.total - total).toBeCloseTo(10, 5);
  });

  it('costs about two cents per 1,000 broadcast emails on top of SES, most of it DynamoDB writes', () => {
    const lines = broadcastCostPerThousand(MILLION);
    const total = totalOfLines(lines);
    expect(total).toBeGreaterThan(0.01);
    expect(total).toBeLessThan(0.025);
    const writes = lines.find((l) => l.item.startsWith('DynamoDB writes'))?.dollars ?? 0;
    expect(writes).toBeCloseTo((21.11 * 0.625) / 1000, 4);
    expect(writes / total).toBeGreaterThan(0.5);
    // The lane's jobs carry the 12 KB content: 10 a batch is 3 chunks of 64 KB, sent and received.
    expect(lines.find((l) => l.item === 'SQS requests')?.arithmetic).toMatch(/the lane 0\.60/);
  });
});

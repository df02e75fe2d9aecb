/**
 * Section 3's request-log line and its record: what the request logs add per 1,000 emails (their
 * write units, their line's ingestion, their storage, the writer), and, when BENCH_RECORD names a
 * file (`npm run bench:record`), the run's per-email counts and batch fills as JSON, which
 * test/unit/model-bench.test.ts holds the model (bin/simulate/calls.ts) to.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_LOG_RETENTION_DAYS } from '../../functions/request-logs/model.js';
import type { BatchFill } from '../simulate/calls.js';
import { ITEM_OVERHEAD_BYTES, type reportCost, requestLogCost } from './cost.js';
import { itemBytes, type MeterLine } from './meter.js';

export interface RecordedRun {
  /** When and how: the command, the emails metered. */
  measuredAt: string;
  command: string;
  emails: number;
  /** The batches' fills of the run, as the model takes them. */
  fill: BatchFill;
  /** The **all** row: AWS requests (receives as one per delete), write and read units, per email. */
  perEmail: { requests: number; writeUnits: number; readUnits: number };
  /** Every metered row, per email (polling left out, as in the table). */
  lines: { label: string; requests: number; writeUnits: number; readUnits: number; messages: number }[];
  requestLogs: {
    writeUnitsPerRequest: number;
    lineBytesPerRequest: number;
    storedBytesPerRequest: number;
    dollarsPer1000: Record<string, number>;
  };
}

/** The log items' stored bytes, each with DynamoDB's 100 bytes of overhead, averaged over the logs. */
async function storedBytesPerLog(db: DynamoDBDocumentClient, tableName: string): Promise<number> {
  let bytes = 0;
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :logs)',
        ExpressionAttributeValues: { ':logs': 'LOGS#' },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      bytes += Object.entries(item).reduce(
        (sum, [name, v]) => sum + Buffer.byteLength(name) + itemBytes(v),
        0,
      );
      bytes += ITEM_OVERHEAD_BYTES;
      count++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return count ? bytes / count : 0;
}

export async function requestLogSummary(input: {
  db: DynamoDBDocumentClient;
  tableName: string;
  emails: number;
  lines: Map<string, MeterLine>;
  cost: ReturnType<typeof reportCost>;
  requestLogBytes: number;
}): Promise<void> {
  const { emails, lines, cost } = input;
  const sum = (match: (label: string) => boolean, field: keyof MeterLine) =>
    [...lines].filter(([label]) => match(label)).reduce((total, [, line]) => total + line[field], 0);
  const invocations = cost.invocationsPerEmail;
  const writerInvocations = invocations['write-request-logs'] ?? 0;
  const logs = {
    writeUnitsPerRequest: sum((label) => label.startsWith('write-request-logs |'), 'writeUnits') / emails,
    lineBytesPerRequest: input.requestLogBytes / emails,
    storedBytesPerRequest: await storedBytesPerLog(input.db, input.tableName),
  };
  const dollars = requestLogCost({
    ...logs,
    writerInvocationsPerRequest: writerInvocations,
    retentionDays: DEFAULT_LOG_RETENTION_DAYS,
    requestsPerEmail: 1,
  });
  console.log(
    `\nRequest logs, per 1,000 emails (one request each): $${dollars.total.toFixed(5)} in all: their ${logs.writeUnitsPerRequest.toFixed(2)} write units a request $${dollars.writes.toFixed(5)}, their line's ingestion (${logs.lineBytesPerRequest.toFixed(0)} bytes) $${dollars.ingestion.toFixed(5)}, their storage (${logs.storedBytesPerRequest.toFixed(0)} bytes a log, ${DEFAULT_LOG_RETENTION_DAYS} days, with point-in-time recovery) $${dollars.storage.toFixed(5)}, the writer's invocations (${writerInvocations.toFixed(2)} a request) $${dollars.writer.toFixed(5)}.`,
  );
  const path = process.env.BENCH_RECORD;
  if (!path) return;
  const fill: BatchFill = {
    sendBatch: 1 / (invocations['process-send-queue'] ?? 1),
    eventsBatch: 2 / (invocations['process-ses-events'] ?? 2),
    logLinesPerInvocation: writerInvocations ? 1 / writerInvocations : 1,
    accountReadsPerEmail: sum((label) => label.endsWith('SESv2:GetAccount'), 'requests') / emails,
  };
  const round = (n: number) => Math.round(n * 10_000) / 10_000;
  const run: RecordedRun = {
    measuredAt: new Date().toISOString(),
    command: 'npm run bench:record (BENCH_SECTIONS=3, BENCH_RECORD)',
    emails,
    fill: Object.fromEntries(Object.entries(fill).map(([k, v]) => [k, round(v)])) as unknown as BatchFill,
    perEmail: {
      requests: round(cost.requestsPerEmail),
      writeUnits: round(cost.writeUnitsPerEmail),
      readUnits: round(cost.readUnitsPerEmail),
    },
    lines: [...lines]
      .filter(([label]) => !/SQS:(ReceiveMessage|GetQueueAttributes)/.test(label))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, line]) => ({
        label,
        requests: round(line.requests / emails),
        writeUnits: round(line.writeUnits / emails),
        readUnits: round(line.readUnits / emails),
        messages: round(line.messages / emails),
      })),
    requestLogs: {
      writeUnitsPerRequest: round(logs.writeUnitsPerRequest),
      lineBytesPerRequest: round(logs.lineBytesPerRequest),
      storedBytesPerRequest: round(logs.storedBytesPerRequest),
      dollarsPer1000: Object.fromEntries(
        Object.entries(dollars).map(([k, v]) => [k, round(v * 1000) / 1000]),
      ),
    },
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(run, null, 2)}\n`);
  console.log(`\nRecorded to ${path}.`);
}

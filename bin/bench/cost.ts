/**
 * What one email costs on AWS, from a metered run of the local service: the AWS requests each
 * function makes, DynamoDB's write and read units (meter.ts), the Lambda invocations and their
 * time, and the log bytes written, priced at the us-east-1 prices of shared/notes/aws-facts.md.
 */
import type { invocationStats } from '../../local/invocation.js';
import type { MeterLine } from './meter.js';

export const PRICES = {
  apiGatewayPerRequest: 1.0 / 1e6, // HTTP API
  lambdaPerRequest: 0.2 / 1e6,
  lambdaPerGbSecond: 0.0000133334, // arm64
  lambdaMemoryGb: 0.5, // the stack's 512 MB
  dynamoPerWriteUnit: 0.625 / 1e6,
  dynamoPerReadUnit: 0.125 / 1e6,
  sqsPerRequest: 0.4 / 1e6,
  snsPerPublish: 0.5 / 1e6,
  logsPerByte: 0.5 / 1024 ** 3,
  s3PerPut: 0.005 / 1000,
  s3PerGet: 0.0004 / 1000,
} as const;

/**
 * How long each invocation runs on AWS, assumed (local wall times are no guide: the emulators are
 * in the same process and every function shares one event loop): an API function makes two to four
 * DynamoDB or SQS calls of a few milliseconds each; a send batch's time is SES's answer (its emails
 * go side by side); an events batch makes a few writes per email, side by side.
 */
export const ASSUMED_INVOCATION_MS: Record<string, number> = {
  'process-send-queue': 150,
  'process-ses-events': 60,
  'deliver-webhooks': 150,
  default: 40,
};

/** Lambda's own lines per invocation (START, END, REPORT) and CloudWatch's 26 bytes per event. */
export const PLATFORM_LOG_BYTES = 360 + 3 * 26;
/** The API's access log line (lib/constructs/email-api.ts's format, typical values) and its event overhead. */
export const ACCESS_LOG_BYTES = 170 + 26;

/** Counts the JSON lines (logs and metrics) written to stdout while `counting` is on, and swallows them. */
export function captureLogLines() {
  let counting = false;
  let bytes = 0;
  let lines = 0;
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    if (text.startsWith('{')) {
      if (counting) {
        for (const line of text.split('\n').filter(Boolean)) {
          lines++;
          bytes += Buffer.byteLength(line) + 26;
        }
      }
      return true;
    }
    return (write as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return {
    start() {
      counting = true;
      bytes = 0;
      lines = 0;
    },
    stop() {
      counting = false;
      return { bytes, lines };
    },
    restore() {
      process.stdout.write = write;
    },
  };
}

export interface CostInput {
  emails: number;
  /** The meter's lines over the run: `fn | Service:Operation kind` → totals. */
  lines: Map<string, MeterLine>;
  /** Invocation stats before and after the run (invocationStats()). */
  invocationsBefore: ReturnType<typeof invocationStats>;
  invocationsAfter: ReturnType<typeof invocationStats>;
  /** JSON log and metric lines the functions wrote over the run (the request logs' lines included). */
  logBytes: number;
  /** Of them, the request logs' lines (docs/logs.md). */
  requestLogBytes?: number;
  /** API requests over the run (one per email here). */
  apiRequests: number;
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);

/** Prints the per-email table and the cost model; returns the total per 1,000 emails. */
export function reportCost(input: CostInput): {
  requestsPerEmail: number;
  writeUnitsPerEmail: number;
  readUnitsPerEmail: number;
  dollarsPer1000: number;
  invocationsPerEmail: Record<string, number>;
} {
  const per = (n: number) => n / input.emails;
  const rows = [...input.lines].sort(([a], [b]) => a.localeCompare(b));
  console.log('| function | request | per email | write units | read units |');
  console.log('|---|---|---|---|---|');
  let requests = 0;
  let writeUnits = 0;
  let readUnits = 0;
  let sqs = 0;
  let sqsDeletes = 0;
  let snsPublishes = 0;
  let s3Puts = 0;
  let s3Gets = 0;
  for (const [label, line] of rows) {
    const [fn, op] = label.split(' | ') as [string, string];
    // Local polling is not what AWS's event source mapping does: receives are modelled below.
    if (op.startsWith('SQS:ReceiveMessage') || op.startsWith('SQS:GetQueueAttributes')) continue;
    // What the local SES publishes: on AWS each event is an SNS publish and an SQS delivery.
    const isEvent = fn === '(local runtime)' && op.startsWith('SQS:SendMessage');
    const name = isEvent ? 'SES → SNS → SQS' : fn;
    const opName = isEvent ? 'an event, published and delivered to the queue' : op;
    const count = isEvent ? line.messages : line.requests;
    console.log(
      `| ${name} | ${opName} | ${fmt(per(count))} | ${line.writeUnits ? fmt(per(line.writeUnits)) : ''} | ${line.readUnits ? fmt(per(line.readUnits)) : ''} |`,
    );
    requests += count;
    writeUnits += line.writeUnits;
    readUnits += line.readUnits;
    if (op.startsWith('SQS:')) sqs += count;
    if (op.startsWith('SQS:DeleteMessage')) sqsDeletes += line.requests;
    if (isEvent) snsPublishes += count;
    if (op.startsWith('S3:PutObject')) s3Puts += line.requests;
    if (op.startsWith('S3:GetObject')) s3Gets += line.requests;
  }
  // Lambda's event source mapping receives a batch and deletes what the function finished: one
  // receive per delete under load (idle long polling is a fixed cost, a few cents a month).
  const receives = sqsDeletes;
  const total = requests + receives;
  console.log(`| (event source mappings) | SQS:ReceiveMessage, one per batch | ${fmt(per(receives))} | | |`);
  console.log(
    `| **all** | **AWS requests** | **${fmt(per(total))}** | **${fmt(per(writeUnits))}** | **${fmt(per(readUnits))}** |`,
  );

  const invocations: Record<string, { count: number; ms: number }> = {};
  for (const [name, after] of Object.entries(input.invocationsAfter)) {
    const before = input.invocationsBefore[name] ?? { count: 0, totalMs: 0 };
    if (after.count > before.count)
      invocations[name] = { count: after.count - before.count, ms: after.totalMs - before.totalMs };
  }
  const invocationCount = Object.values(invocations).reduce((s, i) => s + i.count, 0);
  const billedMs = Object.entries(invocations).reduce(
    (sum, [name, i]) =>
      sum + i.count * (ASSUMED_INVOCATION_MS[name] ?? (ASSUMED_INVOCATION_MS.default as number)),
    0,
  );
  console.log(
    `\nLambda invocations per email: ${Object.entries(invocations)
      .map(
        ([name, i]) => `${name} ${fmt(per(i.count))} (${fmt(i.count ? i.ms / i.count : 0, 0)} ms each here)`,
      )
      .join(', ')}`,
  );

  const cost = {
    'API Gateway (HTTP API)': input.apiRequests * PRICES.apiGatewayPerRequest,
    'Lambda requests': invocationCount * PRICES.lambdaPerRequest,
    'Lambda duration (arm64, 512 MB, durations assumed: ASSUMED_INVOCATION_MS)':
      (billedMs / 1000) * PRICES.lambdaMemoryGb * PRICES.lambdaPerGbSecond,
    'DynamoDB writes': writeUnits * PRICES.dynamoPerWriteUnit,
    'DynamoDB reads': readUnits * PRICES.dynamoPerReadUnit,
    'SQS requests (receives modelled as one per batch)': (sqs + receives) * PRICES.sqsPerRequest,
    'SNS publishes (SES events)': snsPublishes * PRICES.snsPerPublish,
    'S3 requests': s3Puts * PRICES.s3PerPut + s3Gets * PRICES.s3PerGet,
    'CloudWatch Logs (function lines and metrics, the request logs, Lambda platform lines, access log)':
      (input.logBytes + invocationCount * PLATFORM_LOG_BYTES + input.apiRequests * ACCESS_LOG_BYTES) *
      PRICES.logsPerByte,
  };
  console.log(
    `\nLog bytes per email: ${fmt(per(input.logBytes), 0)} written by the functions (JSON lines, metrics included; ${fmt(per(input.requestLogBytes ?? 0), 0)} of them the request logs' lines), ${fmt(
      per(invocationCount * PLATFORM_LOG_BYTES),
      0,
    )} of Lambda platform lines, ${ACCESS_LOG_BYTES} of access log.`,
  );
  console.log('\n| cost per 1,000 emails (on top of SES) | $ |');
  console.log('|---|---|');
  let dollars = 0;
  for (const [item, value] of Object.entries(cost)) {
    if (value === 0) continue;
    dollars += value;
    console.log(`| ${item} | ${fmt((value / input.emails) * 1000, 5)} |`);
  }
  console.log(`| **total** | **${fmt((dollars / input.emails) * 1000, 4)}** |`);
  return {
    requestsPerEmail: per(total),
    writeUnitsPerEmail: per(writeUnits),
    readUnitsPerEmail: per(readUnits),
    dollarsPer1000: (dollars / input.emails) * 1000,
    invocationsPerEmail: Object.fromEntries(
      Object.entries(invocations).map(([name, i]) => [name, per(i.count)]),
    ),
  };
}

/** Storage held per GB-month, DynamoDB standard and point-in-time recovery (us-east-1 list prices). */
export const STORAGE_PER_GB_MONTH = 0.25 + 0.2;
/** DynamoDB bills each item's bytes and 100 more. */
export const ITEM_OVERHEAD_BYTES = 100;

/** What the request logs add per 1,000 emails, each part (docs/logs.md): the bench's measures priced. */
export function requestLogCost(input: {
  writeUnitsPerRequest: number;
  lineBytesPerRequest: number;
  storedBytesPerRequest: number;
  writerInvocationsPerRequest: number;
  retentionDays: number;
  requestsPerEmail: number;
}) {
  const months = input.retentionDays / (365 / 12);
  const perRequest = {
    writes: input.writeUnitsPerRequest * PRICES.dynamoPerWriteUnit,
    ingestion: input.lineBytesPerRequest * PRICES.logsPerByte,
    storage: (input.storedBytesPerRequest / 1024 ** 3) * months * STORAGE_PER_GB_MONTH,
    writer:
      input.writerInvocationsPerRequest *
      (PRICES.lambdaPerRequest +
        ((ASSUMED_INVOCATION_MS.default as number) / 1000) *
          PRICES.lambdaMemoryGb *
          PRICES.lambdaPerGbSecond),
  };
  const per1000 = Object.fromEntries(
    Object.entries(perRequest).map(([part, dollars]) => [part, dollars * input.requestsPerEmail * 1000]),
  ) as typeof perRequest;
  return { ...per1000, total: per1000.writes + per1000.ingestion + per1000.storage + per1000.writer };
}

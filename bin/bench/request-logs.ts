import { closeSync, openSync, writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { DynamoRequestLogRepository } from '../../functions/adapters/dynamodb/request-log-repository.js';
import { INDEXES } from '../../functions/adapters/dynamodb/table.js';
import type { HttpEvent, HttpResponse } from '../../functions/http/middleware.js';
import { withRequestLog } from '../../functions/http/request-log.js';
import { LOG_BODY_CAP_BYTES } from '../../functions/request-logs/model.js';
import { parseRequestLogLine } from '../../functions/request-logs/reads.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { httpEvent } from '../../test/support/events.js';
import { itemBytes } from './meter.js';
import { receipt } from './receipt.js';

/** AWS prices used here (us-east-1). */
const PRICE = {
  logsPerGb: 0.5,
  lambdaPerInvocation: 0.2 / 1e6,
  lambdaPerGbSecond: 0.0000133334,
  writeUnit: 0.625 / 1e6,
};
/** Assumed: lines a subscription delivers per writer invocation, and its time per batch (256 MB). */
const LINES_PER_INVOCATION = 100;
const WRITER_MS_PER_INVOCATION = 60;
/** CloudWatch Logs bills each event's bytes and 26 bytes more. */
const EVENT_OVERHEAD = 26;

interface Case {
  name: string;
  event: HttpEvent;
  status: number;
  response: unknown;
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

function cases(): Case[] {
  const token = `esk_${'a'.repeat(43)}`;
  const email = receipt(1);
  const file = Buffer.alloc(1024 * 1024, 7).toString('base64');
  const listed = Array.from({ length: 100 }, (_, i) => ({
    object: 'email',
    id: `em_01jz${String(i).padStart(22, '0')}`,
    to: ['someone@example.com'],
    from: 'Acme <hello@acme.test>',
    subject: `Your receipt #${i}`,
    created_at: new Date().toISOString(),
    last_event: 'delivered',
    scheduled_at: null,
  }));
  const send = (body: unknown) => {
    const event = httpEvent({
      method: 'POST',
      path: '/v1/emails',
      token,
      headers: { 'user-agent': 'resend-node:6.38.0' },
    });
    // As the JSON body parser leaves it: the parsed object.
    (event as { body: unknown }).body = body;
    return event;
  };
  return [
    { name: 'POST /v1/emails (the 7 KB receipt)', event: send(email), status: 200, response: { id: 'em_x' } },
    {
      name: 'POST /v1/emails with a 1 MB attachment',
      event: send({ ...email, attachments: [{ filename: 'a.pdf', content: file }] }),
      status: 200,
      response: { id: 'em_x' },
    },
    {
      name: 'GET /v1/emails?limit=100 (a 20 KB answer)',
      event: httpEvent({ method: 'GET', path: '/v1/emails', token }),
      status: 200,
      response: { object: 'list', has_more: true, data: listed },
    },
    {
      name: 'GET /v1/emails/{id}, 401',
      event: httpEvent({ method: 'GET', path: '/v1/emails/em_x', token }),
      status: 401,
      response: { name: 'invalid_api_key', message: 'API key is invalid.', statusCode: 401 },
    },
  ];
}

/**
 * What writing a request's log line adds to the request: the same answer with and without the
 * wrapper (http/request-log.ts), its line written to /dev/null with a synchronous write as stdout
 * is on Lambda (a pipe). And what a line costs on AWS: its bytes ingested by CloudWatch Logs, its
 * share of a writer invocation, and its item's write units (base item and the two index entries).
 */
export async function requestLogBench(iterations: number, warmup: number): Promise<string[]> {
  const fd = openSync('/dev/null', 'w');
  const lines: string[] = [];
  const rows: string[] = [
    '| request | added p50 | added p99 | line | write units | cost per 1M requests |',
    '|---|---|---|---|---|---|',
  ];
  const repository = new DynamoRequestLogRepository(undefined as never, 'bench', INDEXES.emailsByTime.name);
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  for (const c of cases()) {
    const answer = async (_event: HttpEvent, context: { responseBody?: unknown; passedDoor?: boolean }) => {
      context.passedDoor = true;
      context.responseBody = c.response;
      return { statusCode: c.status, body: '' } as HttpResponse;
    };
    let last = '';
    const logged = withRequestLog(
      {
        write: (line) => {
          last = line;
          writeSync(fd, `${line}\n`);
        },
      },
      log,
      answer as never,
    );
    const added: number[] = [];
    for (let i = 0; i < warmup + iterations; i++) {
      // Interleaved: the bare answer, then the logged one; the difference is the log's.
      let t = performance.now();
      await answer(c.event, lambdaContext('bench', 10_000) as never);
      const bare = performance.now() - t;
      t = performance.now();
      await logged(c.event, lambdaContext('bench', 10_000));
      const withLog = performance.now() - t;
      if (i >= warmup) added.push(Math.max(0, withLog - bare));
    }
    lines.push(last);
    const entry = parseRequestLogLine(last);
    if (!entry) throw new Error('the bench line does not parse');
    // A log written alone (a group of one): its item by its size, and the status index entry of an error.
    const items = repository.itemsOf([entry], 30).flat();
    const units = items.reduce(
      (sum, item) =>
        sum + Math.ceil(itemBytes(item) / 1024) + (item[INDEXES.emailsByStatus.partitionKey] ? 1 : 0),
      0,
    );
    const bytes = Buffer.byteLength(last) + 1;
    const perRequest =
      ((bytes + EVENT_OVERHEAD) / 1024 ** 3) * PRICE.logsPerGb +
      (PRICE.lambdaPerInvocation + (WRITER_MS_PER_INVOCATION / 1000) * 0.25 * PRICE.lambdaPerGbSecond) /
        LINES_PER_INVOCATION +
      units * PRICE.writeUnit;
    rows.push(
      `| ${c.name} | ${(pct(added, 50) * 1000).toFixed(0)} µs | ${(pct(added, 99) * 1000).toFixed(0)} µs | ${(bytes / 1024).toFixed(1)} KB | ${units} | $${(perRequest * 1e6).toFixed(2)} |`,
    );
  }
  closeSync(fd);
  const batch = gzipSync(JSON.stringify({ logEvents: lines.map((message) => ({ message })) })).length;
  rows.push(
    '',
    `Bodies are capped at ${LOG_BODY_CAP_BYTES / 1024} KB each. Cost: CloudWatch Logs ingestion ($${PRICE.logsPerGb}/GB, the line and ${EVENT_OVERHEAD} bytes), the writer's share of an invocation (assumed ${LINES_PER_INVOCATION} lines and ${WRITER_MS_PER_INVOCATION} ms at 256 MB each), and the write units (the item by its size, 1 per index entry) at $0.625 per million; the ${lines.length} lines above gzip to ${batch} bytes in a subscription event.`,
  );
  return rows;
}

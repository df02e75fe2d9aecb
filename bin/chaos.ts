#!/usr/bin/env node
/**
 * `npm run chaos`: a stream of emails against `npm start` while each fault is injected in turn
 * (LOCAL_FAULTS, see functions/local/faults.ts; and a real SIGKILL), then a wait for every accepted
 * email to reach a final status. Prints, per fault: accepted, settled, stranded (still queued at
 * the end), sent twice (handed to the local SES more than once, read from its ledger on disk).
 *   CHAOS_EMAILS=150 CHAOS_SETTLE_SECONDS=120 CHAOS_ONLY=sigkill npm run chaos
 * Exits 1 when any email is stranded or sent twice.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalFaults } from '../functions/local/faults.js';
import { httpsClient } from '../test/support/https.js';
import { startNpmStart } from '../test/support/npm-start.js';

const EMAILS = Number(process.env.CHAOS_EMAILS ?? 150);
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_SECONDS ?? 120) * 1000;
const CONCURRENCY = 4;
const KEY = 'esk_chaos_harness_key_0123456789';

interface Row {
  name: string;
  faults: LocalFaults;
  /** Kill the service with SIGKILL once this share of the stream was accepted, then start it again. */
  killAt?: number;
}

const ROWS: Row[] = [
  { name: 'none (baseline)', faults: {} },
  { name: 'SIGKILL mid-stream, then restart', faults: {}, killAt: 0.5 },
  { name: 'SES throttling (30%)', faults: { ses: { throttle: 0.3 } } },
  { name: 'SES 5xx after accepting (30%)', faults: { ses: { errorAfterAccept: 0.3 } } },
  { name: 'SES no answer after accepting (30%)', faults: { ses: { hangAfterAccept: 0.3 } } },
  { name: 'duplicate send-queue deliveries (50%)', faults: { sendQueue: { duplicateDelivery: 0.5 } } },
  {
    name: 'SES events duplicated (50%), late and reordered (0-3 s)',
    faults: { sesEvents: { duplicate: 0.5, maxExtraDelayMs: 3000 } },
  },
  { name: 'DynamoDB throttling (20%)', faults: { dynamodb: { throttle: 0.2 } } },
  { name: 'crash between storing and queueing (30%)', faults: { sendQueue: { loseEnqueue: 0.3 } } },
  {
    name: 'all of the above at once, and SIGKILL',
    faults: {
      ses: { throttle: 0.1, errorAfterAccept: 0.1, hangAfterAccept: 0.1 },
      sesEvents: { duplicate: 0.3, maxExtraDelayMs: 2000 },
      sendQueue: { duplicateDelivery: 0.3, loseEnqueue: 0.1 },
      dynamodb: { throttle: 0.05 },
    },
    killAt: 0.5,
  },
];

const RECIPIENTS = [
  ['success@simulator.amazonses.com'],
  ['bounce@simulator.amazonses.com'],
  ['complaint@simulator.amazonses.com'],
  ['suppressionlist@simulator.amazonses.com'],
  ['ooto@simulator.amazonses.com'],
  ['success@simulator.amazonses.com', 'bounce@simulator.amazonses.com'],
];

/** `npm start` with the row's faults, in its own process (so a SIGKILL is a real one). */
async function start(dataDir: string, faults: LocalFaults) {
  const run = await startNpmStart({
    PORT: '0',
    VIEWER_PORT: '0',
    LOCAL_DATA_DIR: dataDir,
    DEV_API_KEY: KEY,
    RATE_LIMIT_PER_SECOND: '100000',
    LOCAL_FAULTS: JSON.stringify(faults),
  });
  if (!run.baseUrl) throw new Error(`npm start did not start:\n${run.output()}`);
  return { ...run, certificate: readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8') };
}

async function runRow(row: Row) {
  const dataDir = mkdtempSync(join(tmpdir(), 'chaos-'));
  let service = await start(dataDir, row.faults);
  let api = httpsClient(service.baseUrl, service.certificate, KEY);
  const started = Date.now();
  try {
    const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    for (let i = 0; i < 300; i++) {
      const read = await api.call('GET', `/domains/${domain.json?.id}`).catch(() => undefined);
      if (read?.json?.status === 'verified') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const accepted: string[] = [];
    let refused = 0;
    let next = 0;
    let killed: Promise<void> | undefined;
    const killAfter = row.killAt === undefined ? Number.POSITIVE_INFINITY : Math.floor(EMAILS * row.killAt);
    const sendOne = async (i: number) => {
      const to = RECIPIENTS[i % RECIPIENTS.length] as string[];
      const sent = await api
        .call('POST', '/emails', {
          body: { from: 'Chaos <hello@acme.test>', to, subject: `chaos ${i}`, text: 'x' },
        })
        .catch(() => undefined);
      if (sent?.status === 200) accepted.push(sent.json.id);
      else refused++; // not accepted (a 5xx, or the connection died with the process): not the promise's
    };
    const worker = async () => {
      while (next < EMAILS) {
        if (accepted.length >= killAfter && !killed) {
          killed = (async () => {
            service.child.kill('SIGKILL');
            await service.exited;
            await api.close();
            service = await start(dataDir, row.faults);
            api = httpsClient(service.baseUrl, service.certificate, KEY);
          })();
        }
        if (killed) await killed;
        await sendOne(next++);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const streamed = Date.now();

    // Wait for every accepted email to be final.
    const statuses = new Map<string, string>();
    const reasons = new Map<string, string>();
    const deadline = Date.now() + SETTLE_MS;
    let open = [...accepted];
    while (open.length && Date.now() < deadline) {
      for (let i = 0; i < open.length; i += 20) {
        await Promise.all(
          open.slice(i, i + 20).map(async (id) => {
            const read = await api.call('GET', `/emails/${id}`).catch(() => undefined);
            if (read?.status === 200) {
              statuses.set(id, read.json.status);
              if (read.json.status === 'failed') reasons.set(id, read.json.failure_reason ?? '');
            }
          }),
        );
      }
      open = accepted.filter((id) => (statuses.get(id) ?? 'queued') === 'queued');
      if (open.length) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const settledMs = Date.now() - streamed;

    const forwarded = new Map<string, number>();
    for (const line of readFileSync(join(dataDir, 'ses', 'sent.jsonl'), 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const entry = JSON.parse(line) as { type: string; emailId: string };
        if (entry.type === 'forwarded') forwarded.set(entry.emailId, (forwarded.get(entry.emailId) ?? 0) + 1);
      } catch {
        // a line cut short by the kill
      }
    }
    const count = (status: string) => accepted.filter((id) => statuses.get(id) === status).length;
    // Why the failed ones failed, by the start of their failure_reason.
    const why = new Map<string, number>();
    for (const reason of reasons.values()) {
      const kind = /^[^:(]+/.exec(reason)?.[0]?.trim() ?? reason;
      why.set(kind, (why.get(kind) ?? 0) + 1);
    }
    return {
      row: row.name,
      accepted: accepted.length,
      refused,
      settled: accepted.length - open.length,
      stranded: open.length,
      sentTwice: accepted.filter((id) => (forwarded.get(id) ?? 0) > 1).length,
      delivered: count('delivered'),
      bounced: count('bounced'),
      failed: count('failed'),
      why: [...why].map(([kind, n]) => `${n} ${kind}`).join('; '),
      settleSeconds: settledMs / 1000,
      totalSeconds: (Date.now() - started) / 1000,
    };
  } finally {
    await api.close();
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const only = process.env.CHAOS_ONLY?.toLowerCase();
const rows = ROWS.filter((row) => !only || row.name.toLowerCase().includes(only));
console.log(
  `\n## Chaos: ${EMAILS} emails per fault, ${CONCURRENCY} clients, up to ${SETTLE_MS / 1000} s to settle\n`,
);
console.log(
  '| fault | accepted | settled | stranded | sent twice | delivered / bounced / failed | settled within | why failed |',
);
console.log('|---|---|---|---|---|---|---|---|');
let broken = 0;
for (const row of rows) {
  const result = await runRow(row);
  broken += result.stranded + result.sentTwice;
  console.log(
    `| ${result.row} | ${result.accepted}${result.refused ? ` (${result.refused} refused)` : ''} | ${result.settled} | ${result.stranded} | ${result.sentTwice} | ${result.delivered} / ${result.bounced} / ${result.failed} | ${result.settleSeconds.toFixed(0)} s | ${result.why || '-'} |`,
  );
}
process.exit(broken ? 1 : 0);

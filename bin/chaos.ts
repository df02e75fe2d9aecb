#!/usr/bin/env node
/**
 * `npm run chaos`: a stream of emails against `npm start` while each fault is injected in turn
 * (LOCAL_FAULTS, see local/faults.ts; and a real SIGKILL), then a wait for every email
 * in the table to reach a final status. Clients retry each request with its Idempotency-Key until
 * answered. Prints, per fault: requests and attempts, accepted, emails stored, requests that made
 * more than one email, stranded (still queued at the end), sent twice (a request whose emails
 * reached the local SES more than once, read from its ledger on disk), and why failed ones failed.
 * The local SES enforces a new production account's rate, 14 a second (LOCAL_SES_MAX_SEND_RATE
 * changes it), so every row also runs through the consumers' pacing.
 *   CHAOS_EMAILS=150 CHAOS_SETTLE_SECONDS=120 CHAOS_ONLY=sigkill LOCAL_SES_MAX_SEND_RATE=14 npm run chaos
 * Exits 1 when a request is not accepted, makes two emails, or any email is stranded or sent twice,
 * or (where the row says none may) failed.
 * Then the broadcast row (bin/chaos-broadcast.ts): a broadcast to CHAOS_BROADCAST_CONTACTS contacts
 * (10,000), SIGKILL mid-fan-out; it fails when a contact has no email or two, one reached SES twice,
 * one is stranded, or a failed one has no reason.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import type { LocalFaults } from '../local/faults.js';
import { startNpmStart } from '../test/support/npm-start.js';
import { runBroadcastRow } from './chaos-broadcast.js';

const EMAILS = Number(process.env.CHAOS_EMAILS ?? 150);
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_SECONDS ?? 120) * 1000;
const CONCURRENCY = 4;
/** A client's wait for one answer, and how long it keeps retrying one request. */
const ATTEMPT_TIMEOUT_MS = 10_000;
const REQUEST_DEADLINE_MS = 120_000;
const KEY = 'esk_chaos_harness_key_0123456789';
const SES_RATE = process.env.LOCAL_SES_MAX_SEND_RATE ?? '14';

interface Row {
  name: string;
  faults: LocalFaults;
  /** Kill the service with SIGKILL once this share of the stream was accepted, then start it again. */
  killAt?: number;
  /** No email may end failed (the fault is one SES recovers from by itself). */
  noneFailed?: boolean;
}

const ROWS: Row[] = [
  { name: 'none (baseline)', faults: {} },
  { name: 'SIGKILL mid-stream, then restart', faults: {}, killAt: 0.5 },
  { name: 'SES throttling (30%)', faults: { ses: { throttle: 0.3 } }, noneFailed: true },
  {
    name: "SES's 24-hour quota spent for the first 20 s, then restored",
    faults: { ses: { quotaSpentForMs: 20_000 } },
    noneFailed: true,
  },
  { name: 'SES 5xx after accepting (30%)', faults: { ses: { errorAfterAccept: 0.3 } } },
  { name: 'SES no answer after accepting (30%)', faults: { ses: { hangAfterAccept: 0.3 } } },
  { name: 'duplicate send-queue deliveries (50%)', faults: { sendQueue: { duplicateDelivery: 0.5 } } },
  {
    name: 'SES events duplicated (50%), late and reordered (0-3 s)',
    faults: { sesEvents: { duplicate: 0.5, maxExtraDelayMs: 3000 } },
  },
  { name: 'DynamoDB throttling (20%)', faults: { dynamodb: { throttle: 0.2 } } },
  { name: 'queueing lost after storing (30%; answered 200)', faults: { sendQueue: { loseEnqueue: 0.3 } } },
  {
    name: 'send-email dies after storing, before queueing or answering (30%)',
    faults: { sendEmail: { crashAfterStore: 0.3 } },
  },
  {
    name: 'all of the above at once, and SIGKILL',
    faults: {
      ses: { throttle: 0.1, errorAfterAccept: 0.1, hangAfterAccept: 0.1 },
      sesEvents: { duplicate: 0.3, maxExtraDelayMs: 2000 },
      sendQueue: { duplicateDelivery: 0.3, loseEnqueue: 0.1 },
      sendEmail: { crashAfterStore: 0.1 },
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
    LOCAL_SES_MAX_SEND_RATE: SES_RATE,
  });
  if (!run.baseUrl) throw new Error(`npm start did not start:\n${run.output()}`);
  return { ...run, certificate: readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8') };
}

/** One answer, or none (a timeout, a reset, a process that died). */
type Answer = { status: number; json: Record<string, unknown> & { id?: string } } | undefined;

async function runRow(row: Row) {
  const dataDir = mkdtempSync(join(tmpdir(), 'chaos-'));
  let service = await start(dataDir, row.faults);
  let dispatcher = new Agent({ connect: { ca: service.certificate } });
  const call = async (
    method: string,
    path: string,
    init: { body?: unknown; key?: string } = {},
  ): Promise<Answer> => {
    try {
      const response = await fetch(`${service.baseUrl}${path}`, {
        method,
        dispatcher,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          ...(init.key ? { 'idempotency-key': init.key } : {}),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: response.status, json: (await response.json()) as never };
    } catch {
      return undefined;
    }
  };
  const started = Date.now();
  try {
    // Added as a careful client adds it: again on no answer or a 5xx (a 409 means it is there).
    let domainId: string | undefined;
    for (let i = 0; i < 100 && !domainId; i++) {
      const added = await call('POST', '/domains', { body: { domain: 'acme.test' } });
      if (added?.status === 201) domainId = added.json.id;
      else if (added?.status === 409)
        domainId = (
          (await call('GET', '/domains'))?.json as { data?: { id: string; name: string }[] } | undefined
        )?.data?.find((d) => d.name === 'acme.test')?.id;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (let i = 0; i < 300; i++) {
      if ((await call('GET', `/domains/${domainId}`))?.json.status === 'verified') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // Each request carries its own Idempotency-Key and is retried, with the same key and body, on
    // anything but an answer (no answer, a reset, a 5xx, 409 while the first attempt still runs),
    // as a careful client does: the promise is then one email per request, whatever happened.
    const runId = Date.now().toString(36);
    const accepted = new Map<number, string>(); // request → the email id it was answered
    let attempts = 0;
    let next = 0;
    let restarting: Promise<void> | undefined;
    const killAfter = row.killAt === undefined ? Number.POSITIVE_INFINITY : Math.floor(EMAILS * row.killAt);
    const restart = async () => {
      service.child.kill('SIGKILL');
      await service.exited;
      await dispatcher.close();
      service = await start(dataDir, row.faults);
      dispatcher = new Agent({ connect: { ca: service.certificate } });
    };
    const sendOne = async (i: number) => {
      const body = {
        from: 'Chaos <hello@acme.test>',
        to: RECIPIENTS[i % RECIPIENTS.length],
        subject: `chaos ${i}`,
        text: 'x',
      };
      const deadline = Date.now() + REQUEST_DEADLINE_MS;
      while (Date.now() < deadline) {
        if (restarting) await restarting;
        attempts++;
        const answer = await call('POST', '/emails', { body, key: `chaos-${runId}-${i}` });
        if (answer?.status === 200 && answer.json.id) {
          accepted.set(i, answer.json.id);
          return;
        }
        if (
          answer &&
          answer.status >= 400 &&
          answer.status < 500 &&
          answer.status !== 409 &&
          answer.status !== 429
        )
          throw new Error(`request ${i} refused: ${answer.status} ${JSON.stringify(answer.json)}`);
        await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1000));
      }
    };
    const worker = async () => {
      while (next < EMAILS) {
        if (next >= killAfter && !restarting) restarting = restart();
        await sendOne(next++);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const streamed = Date.now();

    // Every email in the table, answered or not, must end final.
    const everyEmail = async () => {
      const all: { id: string; status: string; subject: string }[] = [];
      for (let offset = 0; offset <= 10_000; offset += 100) {
        // Read as a careful client reads under faults: again on no answer, a 5xx or a 429. A page
        // never read would make every count below vacuous, so the run fails rather than report it.
        let page = await call('GET', `/emails?limit=100&offset=${offset}`);
        for (let attempt = 1; page?.status !== 200 && attempt < 20; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
          page = await call('GET', `/emails?limit=100&offset=${offset}`);
        }
        if (page?.status !== 200)
          throw new Error(`could not list the emails (offset ${offset}): ${JSON.stringify(page)}`);
        const data = (page.json.data ?? []) as { id: string; status: string; subject: string }[];
        all.push(...data);
        if (!page?.json.has_more) break;
      }
      return all;
    };
    let emails = await everyEmail();
    const deadline = Date.now() + SETTLE_MS;
    while (emails.some((e) => e.status === 'queued') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      emails = await everyEmail();
    }
    const settledMs = Date.now() - streamed;
    const reasons = new Map<string, number>();
    for (const email of emails.filter((e) => e.status === 'failed')) {
      const reason = String((await call('GET', `/emails/${email.id}`))?.json.failure_reason ?? '');
      const kind = /^[^:(]+/.exec(reason)?.[0]?.trim() ?? reason;
      reasons.set(kind, (reasons.get(kind) ?? 0) + 1);
    }

    // What reached SES, from its ledger: per email, and per request (by subject).
    const forwarded = new Map<string, number>();
    for (const line of readFileSync(join(dataDir, 'ses', 'sent.jsonl'), 'utf8').split('\n')) {
      try {
        const entry = JSON.parse(line) as { type: string; emailId: string };
        if (entry.type === 'forwarded') forwarded.set(entry.emailId, (forwarded.get(entry.emailId) ?? 0) + 1);
      } catch {
        // empty, or cut short by the kill
      }
    }
    const perRequest = new Map<string, { emails: number; reachedSes: number }>();
    for (const email of emails) {
      const entry = perRequest.get(email.subject) ?? { emails: 0, reachedSes: 0 };
      entry.emails++;
      entry.reachedSes += forwarded.get(email.id) ?? 0;
      perRequest.set(email.subject, entry);
    }
    const count = (status: string) => emails.filter((e) => e.status === status).length;
    return {
      row: row.name,
      requests: EMAILS,
      accepted: accepted.size,
      attempts,
      emails: emails.length,
      duplicates: [...perRequest.values()].filter((r) => r.emails > 1).length,
      stranded: count('queued'),
      sentTwice: [...perRequest.values()].filter((r) => r.reachedSes > 1).length,
      delivered: count('delivered'),
      bounced: count('bounced'),
      failed: count('failed'),
      why: [...reasons].map(([kind, n]) => `${n} ${kind}`).join('; '),
      settleSeconds: settledMs / 1000,
      totalSeconds: (Date.now() - started) / 1000,
    };
  } finally {
    await dispatcher.close();
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const only = process.env.CHAOS_ONLY?.toLowerCase();
const rows = ROWS.filter((row) => !only || row.name.toLowerCase().includes(only));
console.log(
  `\n## Chaos: ${EMAILS} emails per fault, ${CONCURRENCY} clients, up to ${SETTLE_MS / 1000} s to settle; the local SES takes ${SES_RATE} a second (LOCAL_SES_MAX_SEND_RATE)\n`,
);
console.log(
  '| fault | requests (attempts) | accepted | emails stored | more than one email for a request | stranded | sent twice | delivered / bounced / failed | all final within | why failed |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
let broken = 0;
for (const row of rows) {
  const result = await runRow(row);
  broken +=
    result.stranded +
    result.sentTwice +
    result.duplicates +
    (result.requests - result.accepted) +
    (row.noneFailed ? result.failed : 0);
  console.log(
    `| ${result.row} | ${result.requests} (${result.attempts}) | ${result.accepted} | ${result.emails} | ${result.duplicates} | ${result.stranded} | ${result.sentTwice} | ${result.delivered} / ${result.bounced} / ${result.failed} | ${result.settleSeconds.toFixed(0)} s | ${result.why || '-'} |`,
  );
}

const BROADCAST_CONTACTS = Number(process.env.CHAOS_BROADCAST_CONTACTS ?? 10_000);
if (!only || 'broadcast'.includes(only) || only.includes('broadcast')) {
  const dataDir = mkdtempSync(join(tmpdir(), 'chaos-'));
  try {
    const result = await runBroadcastRow({
      dataDir,
      key: KEY,
      start: () => start(dataDir, {}),
      contacts: BROADCAST_CONTACTS,
      // Its emails at the local SES's rate, and the usual settling time beyond.
      settleMs: SETTLE_MS + (BROADCAST_CONTACTS / Number(SES_RATE)) * 1000,
    });
    broken += result.missing + result.doubled + result.sentTwice + result.stranded + result.withoutReason;
    console.log(
      '\n| broadcast | contacts | emails | contacts without an email / with two | sent twice | stranded | delivered / failed | failed without a reason | status | took |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    console.log(
      `| ${result.row} | ${result.contacts} | ${result.emails} | ${result.missing} / ${result.doubled} | ${result.sentTwice} | ${result.stranded} | ${result.delivered} / ${result.failed} | ${result.withoutReason} | ${result.status} | ${result.seconds.toFixed(0)} s |`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
process.exit(broken ? 1 : 0);

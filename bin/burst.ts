#!/usr/bin/env node
/**
 * `npm run burst`: a burst far past SES's send rate, against `npm start` with a local SES that
 * enforces the rate (LOCAL_SES_MAX_SEND_RATE), as SES does: every email accepted at once (in
 * batches of 100), then a wait until every one is final. Prints, per run: emails delivered and
 * failed, the rate SES took them at, the busiest second, how long the rate over the last second
 * stood above SES's, and SES's throttle answers among its SendEmail calls (read from the local
 * SES's ledger on disk). Exits 1 when an email is not delivered, the rate is more than 10 % off,
 * the rate stood above SES's for more than a second at a time, or more than 2 % of calls were throttled.
 * Then the transactional-first row (bin/burst-lane.ts): 2,000 broadcast emails already queued in
 * their lane at 14 a second, a transactional email every few seconds meanwhile; exits 1 when one of
 * them took more than 2 s from its request to SES, or the broadcast went more than 10 % off the rate.
 *   BURST_RUNS=14:2000,1:60 BURST_LANE=14:2000:8 npm run burst   (BURST_LANE=0: no lane row)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { SesLedger, sendingReport } from '../local/ses-ledger.js';
import { startNpmStart } from '../test/support/npm-start.js';
import { laneBurst } from './burst-lane.js';

const RUNS = (process.env.BURST_RUNS ?? '14:2000,1:60').split(',').map((run) => {
  const [rate, emails] = run.split(':').map(Number);
  if (!rate || !emails) throw new Error(`BURST_RUNS takes rate:emails pairs, not "${run}"`);
  return { rate, emails };
});
const KEY = 'esk_burst_harness_key_0123456789';

async function burst({ rate, emails }: { rate: number; emails: number }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'burst-'));
  const service = await startNpmStart({
    PORT: '0',
    VIEWER_PORT: '0',
    LOCAL_DATA_DIR: dataDir,
    DEV_API_KEY: KEY,
    RATE_LIMIT_PER_SECOND: '1000',
    LOCAL_SES_MAX_SEND_RATE: String(rate),
  });
  if (!service.baseUrl) throw new Error(`npm start did not start:\n${service.output()}`);
  const dispatcher = new Agent({
    connect: { ca: readFileSync(join(dataDir, 'tls', 'localhost-cert.pem'), 'utf8') },
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: response.status,
      json: (await response.json()) as {
        id?: string;
        status?: string;
        data?: { id: string }[];
        has_more?: boolean;
      },
    };
  };
  try {
    const domain = await call('POST', '/domains', { domain: 'acme.test' });
    while ((await call('GET', `/domains/${domain.json.id}`)).json.status !== 'verified')
      await new Promise((resolve) => setTimeout(resolve, 200));

    // Every email at once: batches of 100, side by side.
    const started = Date.now();
    const batches = Array.from({ length: Math.ceil(emails / 100) }, (_, b) =>
      Array.from({ length: Math.min(100, emails - b * 100) }, (_, i) => ({
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: `Burst ${b * 100 + i}`,
        text: 'x',
      })),
    );
    const answers = await Promise.all(batches.map((batch) => call('POST', '/emails/batch', batch)));
    const refused = answers.filter((a) => a.status !== 200);
    if (refused.length) throw new Error(`a batch was refused: ${JSON.stringify(refused[0])}`);
    const acceptedMs = Date.now() - started;

    // Until none is queued (a generous deadline: the emails take emails / rate seconds).
    const deadline = Date.now() + ((emails / rate) * 1.5 + 60) * 1000;
    while ((await call('GET', '/emails?status=queued&limit=1')).json.data?.length) {
      if (Date.now() > deadline) throw new Error('emails still queued past the deadline');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const count = async (status: string) => {
      let total = 0;
      let after: string | undefined;
      for (;;) {
        const page = await call('GET', `/emails?status=${status}&limit=100${after ? `&after=${after}` : ''}`);
        const data = page.json.data ?? [];
        total += data.length;
        if (!page.json.has_more || !data.length) return total;
        after = data.at(-1)?.id;
      }
    };
    const report = sendingReport(new SesLedger(join(dataDir, 'ses', 'sent.jsonl')).entries(), rate);
    return {
      rate,
      emails,
      acceptedMs,
      delivered: await count('delivered'),
      failed: await count('failed'),
      bounced: await count('bounced'),
      ...report,
    };
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log('npm run burst: every email accepted at once, against a local SES that enforces its rate');
let problems = 0;
for (const run of RUNS) {
  const r = await burst(run);
  const throttledShare = r.calls ? r.throttled / r.calls : 0;
  console.log(
    `\nLOCAL_SES_MAX_SEND_RATE=${run.rate}, ${run.emails} emails (accepted in ${(r.acceptedMs / 1000).toFixed(1)} s):` +
      `\n  delivered ${r.delivered}, failed ${r.failed}, bounced ${r.bounced}` +
      `\n  SES took them over ${r.seconds.toFixed(1)} s: ${r.achievedRate.toFixed(2)} per second (${((Math.abs(r.achievedRate - run.rate) / run.rate) * 100).toFixed(1)} % from ${run.rate}),` +
      ` at most ${r.busiestSecond} in any one second; above ${run.rate}/s over the last second for ${(r.longestAboveRateMs / 1000).toFixed(2)} s at most at a time (${(r.aboveRateMs / 1000).toFixed(2)} s in all)` +
      `\n  SendEmail calls ${r.calls}: ${r.throttled} throttled (${(throttledShare * 100).toFixed(2)} %), other refusals ${JSON.stringify(
        Object.fromEntries(Object.entries(r.refused).filter(([k]) => k !== 'TooManyRequestsException')),
      )}`,
  );
  const failures = [
    r.delivered !== run.emails && `${run.emails - r.delivered} not delivered`,
    Math.abs(r.achievedRate - run.rate) / run.rate > 0.1 && 'rate more than 10 % off',
    // A send may go up to 1 s after its slot (LATE_MS), within SES's allowance for bursts.
    r.longestAboveRateMs > 2000 && 'above the rate for more than two seconds at a time',
    throttledShare > 0.02 && 'more than 2 % of calls throttled',
  ].filter(Boolean);
  if (failures.length) {
    problems++;
    console.log(`  FAILED: ${failures.join('; ')}`);
  }
}
const LANE = process.env.BURST_LANE ?? '14:2000:8';
if (LANE !== '0') {
  const [rate = 14, emails = 2000, samples = 8] = LANE.split(':').map(Number);
  const r = await laneBurst({ rate, emails, samples });
  const worst = Math.max(...r.waits);
  const off = Math.abs(r.ofBroadcast.achievedRate - rate) / rate;
  console.log(
    `\nTransactional first: ${emails} broadcast emails queued in the lane (in ${(r.queuedMs / 1000).toFixed(1)} s), LOCAL_SES_MAX_SEND_RATE=${rate}:` +
      `\n  ${samples} transactional emails meanwhile, request to SES: worst ${(worst / 1000).toFixed(2)} s (${r.waits.map((w) => (w / 1000).toFixed(2)).join(', ')}); alone, before the broadcast: ${r.aloneWaits.map((w) => (w / 1000).toFixed(2)).join(', ')} s` +
      `\n  the broadcast: ${r.ofBroadcast.accepted} taken by SES over ${r.ofBroadcast.seconds.toFixed(1)} s, ${r.ofBroadcast.achievedRate.toFixed(2)} per second (${(off * 100).toFixed(1)} % from ${rate}); all sends ${r.everything.achievedRate.toFixed(2)}/s, at most ${r.everything.busiestSecond} in one second, ${r.everything.throttled} of ${r.everything.calls} calls throttled`,
  );
  const failures = [
    worst > 2000 && 'a transactional email took more than 2 s',
    off > 0.1 && 'the broadcast went more than 10 % off the rate',
  ].filter(Boolean);
  if (failures.length) {
    problems++;
    console.log(`  FAILED: ${failures.join('; ')}`);
  }
}
process.exit(problems ? 1 : 0);

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { SesLedger, sendingReport } from '../../local/ses-ledger.js';
import { httpsClient, waitFor } from '../support/https.js';

/**
 * `npm run burst`, short: 100 emails accepted at once against a local SES that enforces 20 a
 * second (as SES enforces an account's rate). None may fail, SES takes them no faster than its
 * rate, and hardly ever throttles: the consumers pace themselves on one shared schedule.
 */
const RATE = 20;
const EMAILS = 100;
const dataDir = mkdtempSync(join(tmpdir(), 'burst-test-'));
let service: LocalService;
let api: ReturnType<typeof httpsClient>;

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 0,
    rateLimitPerSecond: 1000,
    sesAccount: { maxSendRate: RATE },
    // As npm start runs: the emulators and the consumers on threads of their own, so the table's
    // work (the emulator's, on AWS another machine's) does not hold up the consumers' timing.
    threads: true,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
  await waitFor(
    () => api.call('POST', `/domains/${domain.json.id}/verify`),
    (r) => r.json?.status === 'verified',
  );
  // One email through the whole path first, so that what the burst measures is the pacing, not
  // the consumer's first send (its clients and lazily loaded code, the sender's options read once).
  const warmUp = await api.call('POST', '/emails', {
    body: {
      from: 'Acme <hello@acme.test>',
      to: 'success@simulator.amazonses.com',
      subject: 'Warm-up',
      text: 'x',
    },
  });
  await waitFor(
    () => api.call('GET', `/emails/${warmUp.json.id}`),
    (r) => r.json?.status === 'delivered',
  );
}, 30_000);
afterAll(async () => {
  await api?.close();
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a burst past SES’s rate', () => {
  it(`sends ${EMAILS} emails accepted at once at ${RATE} a second: all delivered, none failed, never faster than SES takes them`, async () => {
    const batch = (from: number) =>
      Array.from({ length: 50 }, (_, i) => ({
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: `Burst ${from + i}`,
        text: 'x',
      }));
    const answers = await Promise.all([
      api.call('POST', '/emails/batch', { body: batch(0) }),
      api.call('POST', '/emails/batch', { body: batch(50) }),
    ]);
    const ids = answers.flatMap((a) => (a.json.data as { id: string }[]).map((d) => d.id));
    expect(ids).toHaveLength(EMAILS);
    // One list read a poll (not a read per email): the test's own load must not jostle the pacing it measures.
    const statuses = async () => {
      const listed = (await api.call('GET', `/emails?limit=${EMAILS}`)).json.data as {
        id: string;
        status: string;
      }[];
      const byId = new Map(listed.map((e) => [e.id, e.status]));
      return ids.map((id) => byId.get(id) ?? 'queued');
    };
    const final = await waitFor(statuses, (list) => list.every((s) => s !== 'queued'), 60_000);
    expect(final.filter((s) => s === 'delivered')).toHaveLength(EMAILS);

    const burst = new Set(ids);
    const report = sendingReport(
      new SesLedger(join(dataDir, 'ses', 'sent.jsonl')).entries().filter((e) => burst.has(e.emailId)),
      RATE,
    );
    expect(report.accepted).toBe(EMAILS);
    // Paced at the rate: the schedule books 1 % under it, each slot exactly (held by
    // test/integration/send-pacer.test.ts and test/unit/pacing.test.ts). What SES's ledger sees is
    // each slot plus that send's way there (its claim, then SES's answer), which varies: measured
    // here from 7 to 311 ms, so over a 5-second burst the rate from the first acceptance to the
    // last may read up to about 6 % above the booked one (it read 19.7 to 20.5 on 2 cores). Twice
    // the rate (two consumers booking the same moments) fails it. A few slow sends' neighbours
    // arrive close together for at most a moment: a send may go up to its slot's lateness bound
    // (1 s, emails/deliver-pace.ts LATE_MS, within SES's allowance for bursts) after its slot, so
    // over one-second windows the rate may be passed for up to about two seconds on a busy
    // machine. Whether SES's allowance held is the throttled share below.
    expect(report.achievedRate).toBeLessThanOrEqual(RATE * 1.06);
    expect(report.longestAboveRateMs).toBeLessThanOrEqual(2000);
    expect(report.throttled / report.calls).toBeLessThanOrEqual(0.02);
  }, 90_000);

  it('while SES has sending paused, emails wait queued, none failed; once it resumes they go by themselves', async () => {
    await service.setSesSendingPaused(true);
    const sent = await api.call('POST', '/emails/batch', {
      body: Array.from({ length: 3 }, (_, i) => ({
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: `Paused ${i}`,
        text: 'x',
      })),
    });
    const ids = (sent.json.data as { id: string }[]).map((d) => d.id);
    const read = () => Promise.all(ids.map(async (id) => (await api.call('GET', `/emails/${id}`)).json));
    // Several returns of each (every 2.5 to 5 s locally), SES read again each 2 s: still waiting.
    const waited = Date.now() + 8_000;
    await waitFor(
      async () => Date.now(),
      (now) => now > waited,
      10_000,
    );
    for (const email of await read()) expect(email).toMatchObject({ status: 'queued', last_event: 'queued' });
    await service.setSesSendingPaused(false);
    const done = await waitFor(read, (emails) => emails.every((e) => e.status !== 'queued'), 30_000);
    expect(done.map((e) => e.status)).toEqual(['delivered', 'delivered', 'delivered']);
  }, 60_000);
});

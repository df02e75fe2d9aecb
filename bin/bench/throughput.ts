/**
 * The local pipeline's steady state: `npm start`'s layout (threads: the emulators and the local SES
 * on one, the consumers on another, the API on the main one), clients on the main thread too,
 * after a warm-up. Emails/s end to end (the first send to the last delivery event applied), the
 * accept rate and latency, and CPU per email (process.cpuUsage: every thread of the process,
 * clients included).
 */
import { startLocalService } from '../../local/service.js';
import { httpsClient } from '../../test/support/https.js';
import { receipt } from './receipt.js';

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/**
 * The local service as every section runs it: in memory, on free ports, the domain verified on
 * demand and no background checks (on AWS the domain check and the sweeper cost a few calls a
 * minute, whatever the traffic), the per-key limit out of the way.
 */
export const BENCH_SERVICE = {
  port: 0,
  dataDir: null,
  viewerPort: 0,
  eventDelayMs: 20,
  domainVerifyMs: 0,
  domainCheckIntervalMs: 3_600_000,
  sweepIntervalMs: 3_600_000,
  // Above what the local service sustains, and one rate shard (api-keys/rate-limit.ts): a key's
  // requests cost what a default key's do.
  rateLimitPerSecond: 400,
  // Each consumer instance keeps a sender domain's options for a minute, as on AWS.
  senderOptionsTtlMs: 60_000,
  // The pipeline's own speed is measured here, not SES's rate: a local SES that takes 1,000 a
  // second never holds it back (npm run burst measures the pacing at SES's rate).
  sesAccount: { maxSendRate: 1_000, max24HourSend: 10_000_000 },
} as const;

export async function throughput(emails: number, concurrency: number, warmUp: number) {
  const service = await startLocalService({ ...BENCH_SERVICE, threads: true });
  const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  try {
    const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    if (domain.status !== 201) throw new Error(`could not add the domain: ${domain.text}`);
    await api.call('POST', `/domains/${domain.json.id}/verify`);
    const latencies: number[] = [];
    const run = async (n: number, offset: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            const i = offset + next++;
            const t = performance.now();
            const response = await api.call('POST', '/emails', { body: receipt(i) });
            latencies.push(performance.now() - t);
            if (response.status !== 200) throw new Error(`send failed: ${response.status} ${response.text}`);
          }
        }),
      );
      const accepted = performance.now();
      await service.idle();
      return accepted;
    };
    await run(warmUp, 0);
    latencies.length = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const accepted = await run(emails, warmUp);
    const settled = performance.now();
    const used = process.cpuUsage(cpu);
    const stillQueued = (await api.call('GET', '/emails?status=queued&limit=100')).json?.data?.length;
    if (stillQueued !== 0) throw new Error(`${stillQueued} emails still queued after the run`);
    return {
      endToEnd: emails / ((settled - started) / 1000),
      accepted: emails / ((accepted - started) / 1000),
      cpuMsPerEmail: (used.user + used.system) / 1000 / emails,
      sendP50: pct(latencies, 50),
      sendP95: pct(latencies, 95),
    };
  } finally {
    await api.close();
    await service.stop();
  }
}

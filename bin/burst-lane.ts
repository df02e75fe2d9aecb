/**
 * `npm run burst`'s transactional-first row (issue 41, item 4): a broadcast's backlog already in
 * its lane (`emails` broadcast emails stored with the email repository's createMany, broadcast_id
 * set, and their jobs put on the lane, as the fan-out does), against the local service with a local
 * SES that enforces `rate`; then, while the lane drains, a transactional email every few seconds
 * through the API. Reports the worst time from a transactional request to SES's acceptance of its
 * email (read from the local SES's ledger), and the rate the broadcast went at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../functions/adapters/dynamodb/client.js';
import { emailRepository, openTable } from '../functions/adapters/dynamodb/repositories.js';
import { parseLayout } from '../functions/adapters/dynamodb/table-layout.js';
import { SqsEmailQueue } from '../functions/adapters/sqs/email-queue.js';
import type { SendJob } from '../functions/emails/ports.js';
import { newEmailId, newUuid } from '../functions/shared/ids.js';
import { startLocalService } from '../local/service.js';
import { SesLedger, sendingReport } from '../local/ses-ledger.js';
import { httpsClient, waitFor } from '../test/support/https.js';

export interface LaneBurst {
  rate: number;
  emails: number;
  /** Transactional emails sent while the lane drains (their worst wait is the row's figure). */
  samples: number;
}

export async function laneBurst({ rate, emails, samples }: LaneBurst) {
  const dataDir = mkdtempSync(join(tmpdir(), 'burst-lane-'));
  const service = await startLocalService({
    port: 0,
    dataDir,
    viewerPort: 0,
    domainVerifyMs: 0,
    rateLimitPerSecond: 1000,
    sesAccount: { maxSendRate: rate },
    threads: true,
  });
  const api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  try {
    const domain = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
    await waitFor(
      () => api.call('POST', `/domains/${domain.json.id}/verify`),
      (r) => r.json?.status === 'verified',
    );
    const transactional = async (subject: string) => {
      const startedAt = Date.now();
      const sent = await api.call('POST', '/emails', {
        body: { from: 'Acme <hello@acme.test>', to: 'success@simulator.amazonses.com', subject, text: 'x' },
      });
      if (sent.status !== 200)
        throw new Error(`a transactional email was refused: ${JSON.stringify(sent.json)}`);
      return { id: sent.json.id as string, startedAt, answeredMs: Date.now() - startedAt };
    };
    // One email through the whole path first (clients, lazily loaded code), as npm run burst does.
    const warmUp = await transactional('Warm-up');
    await waitFor(
      () => api.call('GET', `/emails/${warmUp.id}`),
      (r) => r.json?.status === 'delivered',
      30_000,
    );

    // Without a broadcast first: what a transactional email takes alone, for comparison.
    const alone: { id: string; startedAt: number; answeredMs: number }[] = [];
    for (let i = 0; i < 3; i++) {
      alone.push(await transactional(`Alone ${i}`));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }

    // The broadcast's backlog, stored and queued on the lane before any transactional email.
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const db = createDocumentClient(
      new DynamoDBClient({ endpoint: service.endpoints.dynamodb, region: 'us-east-1', credentials }),
    );
    const repository = emailRepository(
      openTable(service.tableName, db, { layout: parseLayout(process.env.TABLE_LAYOUT ?? '') }),
    );
    const lane = new SqsEmailQueue(
      new SQSClient({ endpoint: service.endpoints.sqs, region: 'us-east-1', credentials }),
      service.queues.broadcastLane,
    );
    const broadcastId = newUuid();
    const jobs: SendJob[] = Array.from({ length: emails }, (_, i) => ({
      id: newEmailId(),
      content: {
        from: 'Acme <news@acme.test>',
        to: ['success@simulator.amazonses.com'],
        cc: [],
        bcc: [],
        reply_to: [],
        subject: `Broadcast ${i}`,
        html: null,
        text: 'x',
        tags: [],
        headers: {},
        broadcast_id: broadcastId,
      },
    }));
    const queuedAt = Date.now();
    for (let i = 0; i < jobs.length; i += 100) {
      const page = jobs.slice(i, i + 100);
      const at = new Date().toISOString();
      await repository.createMany(
        page.map((job) => ({ id: job.id, created_at: at, content: job.content })),
        { mayExist: true },
      );
      const refused = await lane.enqueueMany(page);
      if (refused.length) throw new Error(`the lane refused ${refused.length} jobs`);
    }
    const queuedMs = Date.now() - queuedAt;

    // Transactional emails spread over the broadcast's expected time, the first at once.
    const expectedMs = (emails / rate) * 1000;
    const sent: { id: string; startedAt: number; answeredMs: number }[] = [];
    for (let i = 0; i < samples; i++) {
      sent.push(await transactional(`Transactional ${i}`));
      await new Promise((resolve) => setTimeout(resolve, (expectedMs * 0.8) / samples));
    }
    const ledger = new SesLedger(join(dataDir, 'ses', 'sent.jsonl'));
    const broadcast = new Set(jobs.map((job) => job.id));
    const deadline = Date.now() + expectedMs * 1.5 + 60_000;
    for (;;) {
      const taken = ledger.entries().filter((e) => e.type === 'accepted' && broadcast.has(e.emailId)).length;
      if (taken >= emails) break;
      if (Date.now() > deadline)
        throw new Error(`only ${taken} of ${emails} broadcast emails reached SES in time`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const entries = ledger.entries();
    const acceptedAt = new Map(
      entries.filter((e) => e.type === 'accepted').map((e) => [e.emailId, Date.parse(e.at)] as const),
    );
    const waitOf = (s: { id: string; startedAt: number }) =>
      (acceptedAt.get(s.id) ?? Number.POSITIVE_INFINITY) - s.startedAt;
    const waits = sent.map(waitOf);
    const aloneWaits = alone.map(waitOf);
    const everything = sendingReport(entries, rate);
    const ofBroadcast = sendingReport(
      entries.filter((e) => broadcast.has(e.emailId)),
      rate,
    );
    const detail = sent.map((s) => ({
      answeredMs: s.answeredMs,
      ledger: entries
        .filter((e) => e.emailId === s.id)
        .map((e) => `${e.type}${e.error ? `:${e.error}` : ''}@${Date.parse(e.at) - s.startedAt}`),
    }));
    return { rate, emails, queuedMs, waits, aloneWaits, detail, everything, ofBroadcast };
  } finally {
    await api.close();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

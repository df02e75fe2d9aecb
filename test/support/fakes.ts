import { generateApiKey } from '../../functions/api-keys/model.js';
import type { ApiKeyRepository } from '../../functions/api-keys/ports.js';
import {
  DEFAULT_SETTINGS,
  type DnsRecord,
  type DomainStatus,
  type SenderOptions,
} from '../../functions/domains/model.js';
import type { DomainRepository } from '../../functions/domains/ports.js';
import type { EmailContent } from '../../functions/emails/email.js';
import type { DueJob, EmailQueue, Mailer, OutgoingFile, SendJob } from '../../functions/emails/ports.js';
import type { SweepSettings } from '../../functions/emails/sweep.js';
import { newId } from '../../functions/shared/ids.js';
import type { ContentStore } from '../../functions/shared/ports.js';

export class RecordingQueue implements EmailQueue {
  readonly jobs: (SendJob | DueJob)[] = [];
  failWith?: Error;
  /** What backlog() reports. */
  waiting = 0;
  async enqueue(job: SendJob | DueJob) {
    if (this.failWith) throw this.failWith;
    this.jobs.push(job);
  }
  async enqueueMany(jobs: (SendJob | DueJob)[]) {
    if (this.failWith) return jobs.map((job) => job.id);
    this.jobs.push(...jobs);
    return [];
  }
  async backlog() {
    return this.waiting;
  }
}

export class ScriptedMailer implements Mailer {
  readonly sent: (SendJob & { files?: OutgoingFile[]; sender?: SenderOptions })[] = [];
  /** Each call takes the next result; an Error is thrown. */
  constructor(private readonly script: (Error | string)[] = []) {}
  async send(job: SendJob & { files?: OutgoingFile[]; sender?: SenderOptions }) {
    const next = this.script.shift() ?? `msg-${this.sent.length + 1}`;
    if (next instanceof Error) throw next;
    this.sent.push(job);
    return { messageId: next };
  }
}

/** An email's stored content (one recipient, a text body), with what a test needs changed. */
export const emailContent = (over: Partial<EmailContent> = {}): EmailContent => ({
  from: 'hello@acme.com',
  to: ['success@simulator.amazonses.com'],
  cc: [],
  bcc: [],
  reply_to: [],
  subject: 'Hi',
  html: null,
  text: 'Hello',
  tags: [],
  headers: {},
  ...over,
});

export async function fullAccessKey(apiKeys: ApiKeyRepository): Promise<string> {
  const { key, token } = generateApiKey('test', 'full_access', new Date());
  await apiKeys.put(key);
  return token;
}

/** Stores a domain as if it had been added and had reached `status`. */
export async function storeDomain(domains: DomainRepository, name: string, status: DomainStatus) {
  const id = newId('dom');
  const now = new Date().toISOString();
  await domains.claimName(name, id, Date.now(), 15_000);
  const domain = {
    id,
    domain: name,
    status,
    sendable: status === 'verified',
    records: [
      {
        record: 'SPF',
        type: 'TXT',
        name: `send.${name}`,
        value: 'v=spf1 include:amazonses.com ~all',
        ttl: 'Auto',
        status: status,
      } satisfies DnsRecord,
    ],
    created_at: now,
    checked_at: now,
    ...DEFAULT_SETTINGS,
  };
  await domains.save(domain, 'new');
  return { ...domain, version: 1 };
}

/** The sweeper's settings as the stack sets them on AWS (see functions/emails/send-timings.ts). */
export const awsSweepSettings: SweepSettings = {
  requeueAfterMs: 15 * 60_000,
  backlogGraceMs: 4 * 15 * 60_000,
  unknownOutcomeAfterMs: 30 * 60_000,
  finalEventsAfterMs: 15 * 3_600_000,
  oldCheckEveryMs: 3_600_000,
  maxPerRun: 500,
  maxOldPerCheck: 5_000,
  maxDeadLettersPerRun: 100,
  maxAttempts: 5,
};

/** The content store in memory (S3 is exercised through the emulator in the e2e tests). */
export class MemoryContentStore implements ContentStore {
  readonly objects = new Map<string, { bytes: Uint8Array; contentType: string }>();
  failWith?: Error;
  async put(key: string, bytes: Uint8Array, contentType: string) {
    if (this.failWith) throw this.failWith;
    this.objects.set(key, { bytes: new Uint8Array(bytes), contentType });
  }
  async get(key: string) {
    if (this.failWith) throw this.failWith;
    return this.objects.get(key)?.bytes ?? null;
  }
  async size(key: string) {
    return this.objects.get(key)?.bytes.length ?? null;
  }
  /** Until when links work, when sooner than asked (as when the credentials that sign them expire first). */
  linksUntil?: Date;
  async downloadUrl(key: string, file: { filename: string }, expiresInSeconds: number) {
    const asked = new Date(Date.now() + expiresInSeconds * 1000);
    return {
      url: `https://content.test/${key}?filename=${encodeURIComponent(file.filename)}&expires=${expiresInSeconds}`,
      expiresAt: this.linksUntil && this.linksUntil < asked ? this.linksUntil : asked,
    };
  }
}

import { generateApiKey } from '../../functions/core/api-keys.js';
import type { ApiKeyRepository, EmailQueue, Mailer, SendJob } from '../../functions/core/ports.js';

export class RecordingQueue implements EmailQueue {
  readonly jobs: SendJob[] = [];
  failWith?: Error;
  async enqueue(job: SendJob) {
    if (this.failWith) throw this.failWith;
    this.jobs.push(job);
  }
}

export class ScriptedMailer implements Mailer {
  readonly sent: SendJob[] = [];
  /** Each call takes the next result; an Error is thrown. */
  constructor(private readonly script: (Error | string)[] = []) {}
  async send(job: SendJob) {
    const next = this.script.shift() ?? `msg-${this.sent.length + 1}`;
    if (next instanceof Error) throw next;
    this.sent.push(job);
    return { messageId: next };
  }
}

export async function fullAccessKey(apiKeys: ApiKeyRepository): Promise<string> {
  const { key, token } = generateApiKey('test', 'full_access', new Date());
  await apiKeys.put(key);
  return token;
}

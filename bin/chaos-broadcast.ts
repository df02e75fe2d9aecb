/**
 * `npm run chaos`'s broadcast row: a segment of CHAOS_BROADCAST_CONTACTS contacts (10,000 by
 * default) is broadcast, the service is killed with SIGKILL once about half of the fan-out's emails
 * are made, then started again. Once the broadcast is `sent` and no email of it is `queued`, it
 * checks, from the table (GET /v1/emails) and the local SES's ledger on disk: exactly one email per
 * contact, none handed to SES twice, and every one not delivered final with its reason.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';

export interface BroadcastRowResult {
  row: string;
  contacts: number;
  emails: number;
  /** Contacts with no email, and with more than one. */
  missing: number;
  doubled: number;
  sentTwice: number;
  stranded: number;
  /** Not delivered (bounced, failed) without a reason. */
  withoutReason: number;
  delivered: number;
  failed: number;
  status: string;
  seconds: number;
}

interface Service {
  baseUrl?: string;
  certificate: string;
  child: { kill(signal: 'SIGKILL' | 'SIGTERM'): unknown };
  exited: Promise<unknown>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runBroadcastRow(options: {
  dataDir: string;
  key: string;
  start: () => Promise<Service>;
  contacts: number;
  settleMs: number;
}): Promise<BroadcastRowResult> {
  const started = Date.now();
  let service = await options.start();
  let dispatcher = new Agent({ connect: { ca: service.certificate } });
  /** One call, retried (no answer, a 5xx, a 429) as a careful client retries, until answered. */
  const call = async (method: string, path: string, body?: unknown) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await fetch(`${service.baseUrl}${path}`, {
          method,
          dispatcher,
          signal: AbortSignal.timeout(10_000),
          headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const json = (await response.json()) as Record<string, unknown>;
        if (response.status < 500 && response.status !== 429) return { status: response.status, json };
      } catch {
        // no answer: again
      }
      if (attempt >= 40) throw new Error(`${method} ${path} got no answer`);
      await pause(250 * Math.min(attempt, 8));
    }
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const answer = await call(method, path, body);
    if (answer.status >= 300 && answer.status !== 409)
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json;
  };
  try {
    const domain = await call('POST', '/domains', { domain: 'acme.test' });
    const domainId =
      (domain.json.id as string | undefined) ??
      ((await must('GET', '/domains')).data as { id: string; name: string }[]).find(
        (d) => d.name === 'acme.test',
      )?.id;
    for (let i = 0; i < 300 && (await must('GET', `/domains/${domainId}`)).status !== 'verified'; i++)
      await pause(100);

    const segment = await must('POST', '/segments', { name: 'Chaos broadcast' });
    let next = 0;
    const addresses: string[] = [];
    const add = async () => {
      while (next < options.contacts) {
        const i = next++;
        const email = `success+chaos${i}@simulator.amazonses.com`;
        addresses.push(email);
        // A 409 on a retry means the first attempt made it: the contact and its membership are there.
        await must('POST', '/contacts', { email, first_name: `C${i}`, segments: [segment.id] });
      }
    };
    await Promise.all(Array.from({ length: 16 }, add));

    const broadcast = await must('POST', '/broadcasts', {
      name: 'Chaos',
      segment_id: segment.id,
      from: 'Chaos <news@acme.test>',
      subject: 'Hi {{{contact.first_name|there}}}',
      html: '<p>Hello {{{FIRST_NAME}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
      send: true,
    });
    const id = String(broadcast.id);
    // Killed mid-fan-out: once about half of its emails are made.
    for (let i = 0; i < 6000; i++) {
      const got = await must('GET', `/broadcasts/${id}`);
      const created = Number((got.progress as { created?: number } | undefined)?.created ?? 0);
      if (created >= options.contacts / 2) break;
      await pause(50);
    }
    service.child.kill('SIGKILL');
    await service.exited;
    await dispatcher.close();
    service = await options.start();
    dispatcher = new Agent({ connect: { ca: service.certificate } });

    type Listed = { id: string; status: string; to: string[] };
    const everyEmail = async () => {
      const all: Listed[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await must('GET', `/emails?limit=100${after ? `&after=${after}` : ''}`);
        const data = (page.data ?? []) as Listed[];
        all.push(...data);
        if (!page.has_more || !data.length) return all;
        after = data[data.length - 1]?.id;
      }
    };
    const deadline = Date.now() + options.settleMs;
    let status = '';
    let emails: Listed[] = [];
    while (Date.now() < deadline) {
      status = String((await must('GET', `/broadcasts/${id}`)).status);
      emails = await everyEmail();
      if (status === 'sent' && !emails.some((e) => e.status === 'queued')) break;
      await pause(2000);
    }
    const perContact = new Map<string, number>();
    for (const email of emails) {
      const to = email.to[0]?.toLowerCase() ?? '';
      perContact.set(to, (perContact.get(to) ?? 0) + 1);
    }
    const forwarded = new Map<string, number>();
    for (const line of readFileSync(join(options.dataDir, 'ses', 'sent.jsonl'), 'utf8').split('\n')) {
      try {
        const entry = JSON.parse(line) as { type: string; emailId: string };
        if (entry.type === 'forwarded') forwarded.set(entry.emailId, (forwarded.get(entry.emailId) ?? 0) + 1);
      } catch {
        // empty, or cut short by the kill
      }
    }
    let withoutReason = 0;
    for (const email of emails.filter((e) => e.status === 'failed' || e.status === 'bounced')) {
      const detail = await must('GET', `/emails/${email.id}`);
      if (!detail.failure_reason && email.status === 'failed') withoutReason++;
    }
    return {
      row: `broadcast to ${options.contacts} contacts, SIGKILL mid-fan-out, then restart`,
      contacts: options.contacts,
      emails: emails.length,
      missing: addresses.filter((a) => !perContact.has(a.toLowerCase())).length,
      doubled: [...perContact.values()].filter((n) => n > 1).length,
      sentTwice: [...forwarded.values()].filter((n) => n > 1).length,
      stranded: emails.filter((e) => e.status === 'queued').length,
      withoutReason,
      delivered: emails.filter((e) => e.status === 'delivered').length,
      failed: emails.filter((e) => e.status === 'failed').length,
      status,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await dispatcher.close();
    service.child.kill('SIGTERM');
    await service.exited;
  }
}

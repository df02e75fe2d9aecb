import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKey } from '../../functions/api-keys/model.js';
import { decide } from '../../functions/api-keys/rate-limit.js';
import type { MimeSendRequest } from '../../functions/emails/accept-send.js';
import { parseRequestLogLine } from '../../functions/request-logs/reads.js';
import { ApiError, validationError } from '../../functions/shared/errors.js';
import { proxyV2Header } from '../../functions/smtp-relay/proxy.js';
import {
  type Relay,
  type RelayDeps,
  type RelayOptions,
  startRelay,
} from '../../functions/smtp-relay/relay.js';
import type { RelayLimits } from '../../functions/smtp-relay/session.js';
import { localTls } from '../../local/tls.js';
import { plainAuth, smtpTalk } from '../support/smtp.js';

/**
 * The relay on its own (functions/smtp-relay/relay.ts), its pipeline a fake `accept`: what each
 * SMTP step answers and why, over STARTTLS, implicit TLS and the secured port behind a PROXY v2
 * header. The pipeline's own part (acceptMime) is tested with the local service (test/e2e/smtp-relay.test.ts).
 */
const TOKEN = 'esk_relay_test_token_0123456789abcdef';
const KEY: ApiKey = {
  id: 'key_01relaytest',
  name: 'relay test key',
  permission: 'full_access',
  hash: 'h',
  created_at: new Date().toISOString(),
};
const RESTRICTED_TOKEN = 'esk_relay_restricted_0123456789abcdef';
const RESTRICTED: ApiKey = {
  ...KEY,
  id: 'key_01restricted',
  permission: 'sending_access',
  domain: 'other.test',
};

let tls: { key: string; cert: string };
const relays: Relay[] = [];

interface Fake {
  deps: RelayDeps;
  accepted: MimeSendRequest[];
  lookups: string[];
  logs: { message: string; fields?: Record<string, unknown> }[];
  lines: string[];
  /** What the next accept does (default: an email id). */
  acceptWith?: (request: MimeSendRequest) => Promise<{ id: string }>;
  rateSpent: number;
}

function fake(): Fake {
  const f: Fake = { accepted: [], lookups: [], logs: [], lines: [], rateSpent: 0 } as unknown as Fake;
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    f.logs.push({ message: `${level}: ${message}`, fields });
  f.deps = {
    async accept(request) {
      f.accepted.push(request);
      const made = f.acceptWith ? await f.acceptWith(request) : { id: `em_${f.accepted.length}` };
      return { id: made.id, status: 'queued', created_at: new Date().toISOString() };
    },
    async findKey(token) {
      f.lookups.push(token);
      return token === TOKEN ? KEY : token === RESTRICTED_TOKEN ? RESTRICTED : null;
    },
    async admit(_key, nowMs) {
      if (f.rateSpent > 0) {
        f.rateSpent--;
        return decide(11, 10, nowMs);
      }
      return decide(1, 10, nowMs);
    },
    async assertSenderDomain(domain) {
      if (domain !== 'acme.test' && domain !== 'other.test') {
        const message = `The domain ${domain} is not verified: it is not a domain of this service.`;
        throw validationError(message, [{ field: 'from', message }]);
      }
    },
    requestLog: { write: (line) => f.lines.push(line) },
    log: { info: record('info'), warn: record('warn'), error: record('error') },
    clock: { now: () => new Date() },
  };
  return f;
}

async function relay(f: Fake, options: Partial<RelayOptions> = {}, limits: Partial<RelayLimits> = {}) {
  const started = await startRelay(f.deps, {
    hostname: 'smtp.relay.test',
    tls,
    listeners: [
      { kind: 'starttls', port: 0 },
      { kind: 'implicit', port: 0 },
    ],
    ...options,
    limits: { ...limits, ...options.limits },
  });
  relays.push(started);
  return started;
}

const transport = (r: Relay, mode: 'starttls' | 'implicit', extra: Record<string, unknown> = {}) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: mode === 'starttls' ? r.ports.starttls : r.ports.implicit,
    secure: mode === 'implicit',
    requireTLS: mode === 'starttls',
    auth: { user: 'resend', pass: TOKEN },
    tls: { ca: tls.cert, servername: 'localhost' },
    ...extra,
  } as Parameters<typeof nodemailer.createTransport>[0]);

const message = (extra: Record<string, unknown> = {}) => ({
  from: 'Acme <hello@acme.test>',
  to: 'ada@example.com',
  bcc: 'hidden@example.com',
  subject: 'Hello over SMTP',
  text: 'Plain words',
  html: '<p>Rich words</p>',
  attachments: [{ filename: 'note.txt', content: 'attached bytes' }],
  ...extra,
});

/** An SMTP failure as nodemailer reports it: the reply line. */
const failure = async (sending: Promise<unknown>): Promise<string> => {
  try {
    await sending;
  } catch (error) {
    return String((error as { response?: string }).response ?? (error as Error).message);
  }
  throw new Error('the send succeeded');
};

beforeAll(async () => {
  tls = await localTls(undefined);
});
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await Promise.all(relays.map((r) => r.close()));
});

describe('the SMTP relay', () => {
  it.each(['starttls', 'implicit'] as const)(
    'takes a message over %s: 250 with the email id once accept resolved, the envelope (Bcc included) as recipients',
    async (mode) => {
      const f = fake();
      const r = await relay(f);
      const info = await transport(r, mode).sendMail(message());
      expect(info.response).toBe('250 2.0.0 OK em_1');
      expect(f.accepted).toHaveLength(1);
      const [request] = f.accepted as [MimeSendRequest];
      expect(request.envelope).toEqual({
        mailFrom: 'hello@acme.test',
        recipients: ['ada@example.com', 'hidden@example.com'],
      });
      expect(request.apiKey.id).toBe(KEY.id);
      const raw = Buffer.from(request.raw).toString('utf8');
      expect(raw).toContain('Subject: Hello over SMTP');
      expect(raw).toContain('note.txt');
      expect(raw).not.toMatch(/^Bcc:/im);
      // The request log: one entry, POST /smtp, the key by id, no token, the summary.
      expect(f.lines).toHaveLength(1);
      const entry = parseRequestLogLine(f.lines[0] as string);
      expect(entry).toMatchObject({
        method: 'POST',
        endpoint: '/smtp',
        response_status: 200,
        api_key_id: KEY.id,
      });
      expect(entry?.user_agent).toMatch(/^SMTP ESMTPSA \(EHLO /);
      expect(JSON.parse(entry?.request_body as string)).toMatchObject({
        mail_from: 'hello@acme.test',
        rcpt_to: ['ada@example.com', 'hidden@example.com'],
        subject: 'Hello over SMTP',
      });
      expect(JSON.parse(entry?.response_body as string)).toEqual({ id: 'em_1' });
      // The session's log lines name the client and the key by id and name, never the token.
      const all = JSON.stringify(f.logs) + f.lines.join('\n');
      expect(all).not.toContain(TOKEN);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const login = f.logs.find((l) => l.message === 'info: smtp login');
      expect(login?.fields).toMatchObject({
        client_address: '127.0.0.1',
        key_id: KEY.id,
        key_name: KEY.name,
      });
    },
  );

  it('advertises SIZE (the limit), PIPELINING and enhanced status codes, and refuses AUTH before STARTTLS', async () => {
    const f = fake();
    const r = await relay(f);
    const talk = await smtpTalk(r.ports.starttls as number);
    expect(talk.greeting).toMatch(/^220 smtp\.relay\.test ESMTP/);
    const ehlo = await talk.command('EHLO client.test');
    expect(ehlo).toContain('PIPELINING');
    expect(ehlo).toContain('SIZE 41943040');
    expect(ehlo).toContain('ENHANCEDSTATUSCODES');
    expect(ehlo).toContain('STARTTLS');
    expect(await talk.command(`AUTH PLAIN ${plainAuth(TOKEN)}`)).toMatch(/^538 5\.7\.0 /);
    expect(await talk.command('MAIL FROM:<hello@acme.test>')).toMatch(/^530 /);
    expect(f.lookups).toEqual([]);
    await talk.starttls(tls.cert);
    await talk.command('EHLO client.test');
    expect(await talk.command(`AUTH PLAIN ${plainAuth(TOKEN)}`)).toMatch(/^235 /);
    talk.end();
  });

  it('answers a bad key 535 5.7.8, and repeated failures from one address 421 4.7.0 without looking keys up', async () => {
    const f = fake();
    const r = await relay(f, {}, { maxFailedAuth: 3 });
    const bad = (pass: string) =>
      failure(transport(r, 'implicit', { auth: { user: 'resend', pass } }).sendMail(message()));
    expect(await bad('esk_wrong_0000000000000000000000')).toMatch(/^535 5\.7\.8 /);
    expect(await bad('esk_wrong_1111111111111111111111')).toMatch(/^535 5\.7\.8 /);
    expect(await bad('esk_wrong_2222222222222222222222')).toMatch(/^421 4\.7\.0 /);
    const lookups = f.lookups.length;
    // Blocked now: even the right key is refused, and no lookup is made.
    expect(await bad(TOKEN)).toMatch(/^421 4\.7\.0 /);
    expect(f.lookups).toHaveLength(lookups);
    // Another username is a failure too (Resend's username is `resend`).
    const other = await relay(fake());
    expect(
      await failure(
        transport(other, 'implicit', { auth: { user: 'admin', pass: TOKEN } }).sendMail(message()),
      ),
    ).toMatch(/^535 5\.7\.8 /);
  });

  it('refuses an unverified sender domain 550 5.7.1 at MAIL FROM, and after DATA when accept says the From header is', async () => {
    const f = fake();
    const r = await relay(f);
    expect(await failure(transport(r, 'starttls').sendMail(message({ from: 'x@unverified.test' })))).toMatch(
      /^550 5\.7\.1 The domain unverified\.test is not verified/,
    );
    expect(f.accepted).toHaveLength(0);
    f.acceptWith = async () => {
      const text = 'The domain header.test is not verified.';
      throw validationError(text, [{ field: 'from', message: text }]);
    };
    expect(
      await failure(
        transport(r, 'starttls').sendMail(
          message({ from: 'x@header.test', envelope: { from: 'x@acme.test', to: 'a@b.test' } }),
        ),
      ),
    ).toMatch(/^550 5\.7\.1 /);
    // A key kept to one domain may not send from another (checked at MAIL FROM too).
    expect(
      await failure(
        transport(r, 'starttls', { auth: { user: 'resend', pass: RESTRICTED_TOKEN } }).sendMail(message()),
      ),
    ).toMatch(/^550 5\.7\.1 This API key may only send from other\.test/);
    // Each refusal is in the request log with the status the API would have answered.
    const statuses = f.lines.map((l) => parseRequestLogLine(l)?.response_status);
    expect(statuses).toEqual([400, 400, 403]);
  });

  it('refuses a message over the limit 552 5.3.4: declared at MAIL FROM, or running over in DATA (nothing accepted)', async () => {
    const f = fake();
    const r = await relay(f, {}, { maxMessageBytes: 20_000 });
    const talk = await smtpTalk(r.ports.implicit as number, { tls: { ca: tls.cert } });
    await talk.command('EHLO client.test');
    expect(await talk.command(`AUTH PLAIN ${plainAuth(TOKEN)}`)).toMatch(/^235 /);
    expect(await talk.command('MAIL FROM:<hello@acme.test> SIZE=50000')).toMatch(/^552 5\.3\.4 /);
    talk.end();
    const big = message({ text: 'x'.repeat(30_000), html: undefined, attachments: [] });
    expect(await failure(transport(r, 'implicit').sendMail(big))).toMatch(/^552 5\.3\.4 /);
    expect(f.accepted).toHaveLength(0);
    expect(parseRequestLogLine(f.lines.at(-1) as string)?.response_status).toBe(413);
  });

  it('holds at most its budget of message bytes at once: past it 452 4.3.1 (try again), nothing kept; the bytes are given back', async () => {
    const f = fake();
    const r = await relay(f, {}, { maxBufferedBytes: 20_000 });
    const big = message({ text: 'x'.repeat(30_000), html: undefined, attachments: [] });
    expect(await failure(transport(r, 'implicit').sendMail(big))).toMatch(/^452 4\.3\.1 /);
    expect(f.accepted).toHaveLength(0);
    // What the refused message held was given back: a message within the budget is taken.
    await transport(r, 'implicit').sendMail(message({ text: 'small', html: undefined, attachments: [] }));
    await transport(r, 'implicit').sendMail(message({ text: 'small', html: undefined, attachments: [] }));
    expect(f.accepted).toHaveLength(2);
    // One client address holds at most a quarter of it: 30 KB is refused under a 100 KB budget that
    // has room, so one client sending large messages at once leaves the rest to the others.
    const shared = await relay(f, {}, { maxBufferedBytes: 100_000 });
    expect(await failure(transport(shared, 'implicit').sendMail(big))).toMatch(/^452 4\.3\.1 /);
    expect(f.accepted).toHaveLength(2);
  });

  it('keeps no bodies in the request log when the stack says so (requestLogBodies false)', async () => {
    const f = fake();
    f.deps.requestLogBodies = false;
    const r = await relay(f);
    await transport(r, 'implicit').sendMail(message());
    const entry = parseRequestLogLine(f.lines[0] as string);
    expect(entry).toMatchObject({
      endpoint: '/smtp',
      response_status: 200,
      request_body: null,
      response_body: null,
    });
  });

  it('answers the 51st recipient 452 4.5.3 and sends to the first 50', async () => {
    const f = fake();
    const r = await relay(f);
    const to = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
    const info = await transport(r, 'starttls').sendMail(message({ to, bcc: undefined }));
    expect(info.rejected).toEqual(['r50@example.com']);
    expect(
      String((info as { rejectedErrors?: { response?: string }[] }).rejectedErrors?.[0]?.response),
    ).toMatch(/^452 4\.5\.3 /);
    expect(f.accepted[0]?.envelope.recipients).toHaveLength(50);
  });

  it('answers 451 4.7.1 with the seconds to wait when the key rate is spent; a retry then succeeds', async () => {
    const f = fake();
    f.rateSpent = 1;
    const r = await relay(f);
    expect(await failure(transport(r, 'starttls').sendMail(message()))).toMatch(
      /^451 4\.7\.1 Rate limit: this API key may send 10 messages a second; try again in 1 s/,
    );
    expect(parseRequestLogLine(f.lines[0] as string)?.response_status).toBe(429);
    const info = await transport(r, 'starttls').sendMail(message());
    expect(info.response).toMatch(/^250 2\.0\.0 OK em_1$/);
  });

  it('maps the pipeline errors: a failure of ours 451 4.3.0 (never 5xx), an idempotency key in use 451, reused for another message 554', async () => {
    const f = fake();
    const r = await relay(f);
    f.acceptWith = async () => {
      throw new Error('the table is away');
    };
    expect(await failure(transport(r, 'starttls').sendMail(message()))).toMatch(/^451 4\.3\.0 /);
    f.acceptWith = async () => {
      throw new ApiError(409, 'concurrent_idempotent_requests', 'A request with this key is in progress.');
    };
    expect(await failure(transport(r, 'starttls').sendMail(message()))).toMatch(/^451 4\.3\.0 /);
    f.acceptWith = async () => {
      throw new ApiError(409, 'invalid_idempotent_request', 'This key was used with another message.');
    };
    expect(await failure(transport(r, 'starttls').sendMail(message()))).toMatch(/^554 5\.7\.0 /);
    expect(f.logs.some((l) => l.message === 'error: smtp message failed')).toBe(true);
  });

  it('takes 100 messages on one connection', async () => {
    const f = fake();
    const r = await relay(f);
    const pool = transport(r, 'starttls', { pool: true, maxConnections: 1, maxMessages: 200 });
    const infos = await Promise.all(
      Array.from({ length: 100 }, (_, i) => pool.sendMail(message({ subject: `n${i}` }))),
    );
    pool.close();
    expect(infos.every((info) => /^250 2\.0\.0 OK em_\d+$/.test(info.response))).toBe(true);
    expect(f.accepted).toHaveLength(100);
    await expect.poll(() => f.logs.filter((l) => l.message === 'info: smtp session closed').length).toBe(1);
    expect(f.logs.find((l) => l.message === 'info: smtp session closed')?.fields?.messages).toBe(100);
  });

  it('bounds connections per client address: the next is answered 421 4.7.0', async () => {
    const f = fake();
    const r = await relay(f, {}, { maxConnectionsPerAddress: 2 });
    const a = await smtpTalk(r.ports.starttls as number);
    const b = await smtpTalk(r.ports.starttls as number);
    const c = await smtpTalk(r.ports.starttls as number);
    expect(a.greeting).toMatch(/^220 /);
    expect(b.greeting).toMatch(/^220 /);
    expect(c.greeting).toMatch(/^421 4\.7\.0 Too many connections/);
    await c.closed();
    a.end();
    b.end();
  });

  it('closes an idle session and one that trickles a command, 421 4.4.2', async () => {
    const f = fake();
    const r = await relay(f, {}, { idleTimeoutMs: 300, commandTimeoutMs: 600 });
    const idle = await smtpTalk(r.ports.starttls as number);
    expect(await idle.reply()).toMatch(/^421 4\.4\.2 /);
    const slow = await smtpTalk(r.ports.starttls as number);
    const trickle = setInterval(() => slow.write('E'), 100);
    expect(await slow.reply()).toMatch(/^421 4\.4\.2 Command timeout/);
    clearInterval(trickle);
  });

  it('reads the client address from a PROXY protocol v2 header on the secured port (taken as TLS)', async () => {
    const f = fake();
    const r = await relay(f, { listeners: [{ kind: 'secured', port: 0, proxyProtocol: true }] });
    const header = proxyV2Header(
      { address: '203.0.113.7', port: 40000 },
      { address: '10.0.0.5', port: 2465 },
    );
    const talk = await smtpTalk(r.ports.secured as number, { before: header });
    expect(talk.greeting).toMatch(/^220 /);
    const ehlo = await talk.command('EHLO client.test');
    expect(ehlo).not.toContain('STARTTLS');
    expect(await talk.command(`AUTH PLAIN ${plainAuth(TOKEN)}`)).toMatch(/^235 /);
    expect(f.logs.find((l) => l.message === 'info: smtp login')?.fields?.client_address).toBe('203.0.113.7');
    talk.end();
    // Without a header, the connection is dropped.
    const bare = await smtpTalk(r.ports.secured as number, { before: Buffer.from('EHLO x\r\n') }).catch(
      (error: Error) => error,
    );
    expect(bare instanceof Error || bare.greeting === '(closed)').toBe(true);
  });

  it('drains: an open DATA finishes and is answered 250, idle sessions and new commands get 421, then it closes', async () => {
    const f = fake();
    const r = await relay(f);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => undefined;
    const inAccept = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    f.acceptWith = async () => {
      arrived();
      await gate;
      return { id: 'em_drained' };
    };
    const idle = await smtpTalk(r.ports.starttls as number);
    await idle.command('EHLO idle.test');
    const sending = transport(r, 'starttls').sendMail(message());
    await inAccept;
    const drained = r.drain();
    expect(await idle.reply()).toMatch(/^421 4\.3\.2 /);
    release();
    expect((await sending).response).toBe('250 2.0.0 OK em_drained');
    await drained;
    expect(r.activeConnections()).toBe(0);
    await expect(smtpTalk(r.ports.starttls as number, { timeoutMs: 2_000 })).rejects.toThrow();
  });
});

import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../functions/webhooks/model.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';
import { plainAuth, type SmtpTalk, smtpTalk } from '../support/smtp.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The SMTP relay as `npm start` runs it (local/smtp-relay.ts), against the whole local pipeline:
 * nodemailer over STARTTLS and implicit TLS, the API and webhooks seeing what it sent, and each
 * refusal with the code that says why, in the request log too (issue 42's tests).
 */
const RATE = 50;
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let hooks: Awaited<ReturnType<typeof startReceiver>>;
let hook: { id: string; signing_secret: string };

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    inboundSmtpPort: 0,
    smtpRelayPort: 0,
    smtpRelayTlsPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 200,
    domainCheckIntervalMs: 100,
    rateLimitPerSecond: RATE,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  hooks = await startReceiver();
  const created = await api.call('POST', '/webhooks', {
    body: { endpoint: hooks.url, events: ['email.sent', 'email.delivered'] },
  });
  expect(created.status).toBe(201);
  hook = created.json;
  expect((await api.call('POST', '/domains', { body: { domain: 'acme.test' } })).status).toBe(201);
  const verified = await waitFor(
    () => api.call('GET', '/domains'),
    (r) => r.json?.data?.[0]?.status === 'verified',
  );
  expect(verified.json.data[0].status).toBe('verified');
}, 60_000);
afterAll(async () => {
  await api?.close();
  await service?.stop();
  await hooks?.close();
});

const transport = (mode: 'starttls' | 'implicit', extra: Record<string, unknown> = {}) =>
  nodemailer.createTransport({
    host: service.smtpRelay.host,
    port: mode === 'starttls' ? service.smtpRelay.port : service.smtpRelay.tlsPort,
    secure: mode === 'implicit',
    requireTLS: mode === 'starttls',
    auth: { user: 'resend', pass: service.apiKey },
    tls: { ca: service.certificate, servername: 'localhost' },
    ...extra,
  } as Parameters<typeof nodemailer.createTransport>[0]);

const failure = async (sending: Promise<unknown>): Promise<string> => {
  try {
    await sending;
  } catch (error) {
    return String((error as { response?: string }).response ?? (error as Error).message);
  }
  throw new Error('the send succeeded');
};

/** An authenticated session over implicit TLS, for what nodemailer will not send. */
const session = async (): Promise<SmtpTalk> => {
  const talk = await smtpTalk(service.smtpRelay.tlsPort, { tls: { ca: service.certificate } });
  await talk.command('EHLO e2e.test');
  expect(await talk.command(`AUTH PLAIN ${plainAuth(service.apiKey)}`)).toMatch(/^235 /);
  return talk;
};

const idOf = (response: string) => /^250 2\.0\.0 OK (em_\w+)$/.exec(response)?.[1] as string;

/** The request log's entries for SMTP sessions (GET /v1/logs?path=/smtp), newest first. */
const smtpLogs = async () => (await api.call('GET', '/logs?path=/smtp&limit=100')).json?.data ?? [];

describe('the SMTP relay on the local service: its own answers (no pipeline change needed)', () => {
  it('refuses AUTH before STARTTLS, and a bad key 535 5.7.8', async () => {
    const talk = await smtpTalk(service.smtpRelay.port);
    await talk.command('EHLO e2e.test');
    expect(await talk.command(`AUTH PLAIN ${plainAuth(service.apiKey)}`)).toMatch(/^538 5\.7\.0 /);
    talk.end();
    expect(
      await failure(
        transport('starttls', {
          auth: { user: 'resend', pass: 'esk_not_a_key_of_ours_0123456789' },
        }).sendMail({
          from: 'hello@acme.test',
          to: 'success@simulator.amazonses.com',
          text: 'x',
        }),
      ),
    ).toMatch(/^535 5\.7\.8 /);
  });

  it('refuses an unverified sender 550 5.7.1, a declared size over 40 MB 552 5.3.4, the 51st recipient 452 4.5.3; logged', async () => {
    const talk = await session();
    expect(await talk.command('MAIL FROM:<x@unverified.test>')).toMatch(
      /^550 5\.7\.1 The domain unverified\.test/,
    );
    expect(await talk.command(`MAIL FROM:<hello@acme.test> SIZE=${40 * 1024 * 1024 + 1}`)).toMatch(
      /^552 5\.3\.4 /,
    );
    expect(await talk.command('MAIL FROM:<hello@acme.test>')).toMatch(/^250 /);
    for (let i = 0; i < 50; i++) expect(await talk.command(`RCPT TO:<r${i}@example.com>`)).toMatch(/^250 /);
    expect(await talk.command('RCPT TO:<r50@example.com>')).toMatch(/^452 4\.5\.3 /);
    talk.end();
    // The refusal at MAIL FROM is in the request log, under the key, as the API's 400 would be.
    const logs = await waitFor(smtpLogs, (data) =>
      data.some((l: { response_status: number }) => l.response_status === 400),
    );
    const refused = logs.find((l: { response_status: number }) => l.response_status === 400);
    expect(refused).toMatchObject({ method: 'POST', endpoint: '/smtp' });
    const detail = (await api.call('GET', `/logs/${refused.id}`)).json;
    expect(JSON.stringify(detail)).not.toContain(service.apiKey);
    expect(detail.request_body).toMatchObject({ mail_from: 'x@unverified.test' });
  });

  it('answers 451 4.7.1 when the key rate is spent, and a retry after the wait is taken', async () => {
    const talk = await session();
    let refused: string | undefined;
    for (let attempt = 0; attempt < 10 && !refused; attempt++) {
      // Each MAIL FROM counts once on the key's rate (the same count as its API requests):
      // pipelined past the limit, the rest of the window's are refused.
      talk.write('MAIL FROM:<hello@acme.test>\r\nRSET\r\n'.repeat(RATE + 10));
      for (let i = 0; i < RATE + 10; i++) {
        const answer = await talk.reply();
        await talk.reply();
        if (answer.startsWith('451')) refused ??= answer;
      }
    }
    expect(refused).toMatch(
      /^451 4\.7\.1 Rate limit: this API key may send 50 messages a second; try again in \d+ s$/,
    );
    const seconds = Number(/try again in (\d+) s/.exec(refused as string)?.[1]);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    expect(await talk.command('MAIL FROM:<hello@acme.test>')).toMatch(/^250 /);
    talk.end();
  });
});

/**
 * What an accepted message becomes needs acceptMime (emails/accept-send.ts), built beside the
 * relay: these pass once it is.
 */
describe('the SMTP relay on the local service: messages through the pipeline', () => {
  it.each(['starttls', 'implicit'] as const)(
    'delivers html, text, an attachment and a Bcc over %s; the API shows the parts; signed webhooks follow',
    async (mode) => {
      const subject = `Over ${mode}`;
      const info = await transport(mode).sendMail({
        from: 'Acme <hello@acme.test>',
        to: 'success@simulator.amazonses.com',
        bcc: 'success+bcc@simulator.amazonses.com',
        subject,
        text: 'Plain words',
        html: '<p>Rich words</p>',
        attachments: [{ filename: 'note.txt', content: 'attached bytes' }],
      });
      const id = idOf(info.response);
      expect(id).toMatch(/^em_/);
      const email = await waitFor(
        () => api.call('GET', `/emails/${id}`),
        (r) => r.json?.last_event === 'delivered',
        20_000,
      );
      expect(email.json).toMatchObject({
        id,
        subject,
        to: ['success@simulator.amazonses.com'],
        bcc: ['success+bcc@simulator.amazonses.com'],
        text: expect.stringContaining('Plain words'),
        html: expect.stringContaining('<p>Rich words</p>'),
        last_event: 'delivered',
      });
      const attachments = await api.call('GET', `/emails/${id}/attachments`);
      expect(attachments.json.data.map((a: { filename: string }) => a.filename)).toEqual(['note.txt']);
      const listed = await api.call('GET', '/emails?limit=20');
      expect(listed.json.data.some((e: { id: string }) => e.id === id)).toBe(true);
      const signed = await waitFor(
        async () => hooks.received.filter((r) => JSON.parse(r.body).data?.email_id === id),
        (got) => got.some((r) => JSON.parse(r.body).type === 'email.delivered'),
        20_000,
      );
      expect(signed.map((r) => JSON.parse(r.body).type).sort()).toEqual(['email.delivered', 'email.sent']);
      for (const r of signed)
        expect(
          verifySignature(
            hook.signing_secret,
            r.headers['webhook-id'] as string,
            r.headers['webhook-timestamp'] as string,
            r.body,
            r.headers['webhook-signature'] as string,
          ),
        ).toBe(true);
    },
  );

  it('sends one email for a repeated Resend-Idempotency-Key, and for a repeated Message-ID', async () => {
    const mail = (headers: Record<string, string>, messageId?: string) => ({
      from: 'hello@acme.test',
      to: 'success@simulator.amazonses.com',
      subject: 'Once',
      text: 'once',
      headers,
      // The same bytes each time, as a client retrying a message whose answer it lost sends them.
      date: new Date('2026-11-28T10:00:00Z'),
      ...(messageId ? { messageId } : {}),
    });
    const first = idOf(
      (
        await transport('starttls').sendMail(
          mail({ 'Resend-Idempotency-Key': 'relay-once-1' }, '<once-1@acme.test>'),
        )
      ).response,
    );
    const again = idOf(
      (
        await transport('starttls').sendMail(
          mail({ 'Resend-Idempotency-Key': 'relay-once-1' }, '<once-1@acme.test>'),
        )
      ).response,
    );
    expect(again).toBe(first);
    const byId = idOf((await transport('implicit').sendMail(mail({}, '<retry-1@acme.test>'))).response);
    const retried = idOf((await transport('implicit').sendMail(mail({}, '<retry-1@acme.test>'))).response);
    expect(retried).toBe(byId);
    expect(byId).not.toBe(first);
  });

  it('takes 100 messages on one connection, all delivered', async () => {
    const talk = await session();
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      let answer = await talk.command('MAIL FROM:<hello@acme.test>');
      while (answer.startsWith('451 4.7.1')) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        answer = await talk.command('MAIL FROM:<hello@acme.test>');
      }
      expect(answer).toMatch(/^250 /);
      expect(await talk.command('RCPT TO:<success@simulator.amazonses.com>')).toMatch(/^250 /);
      expect(await talk.command('DATA')).toMatch(/^354 /);
      const body = `From: hello@acme.test\r\nTo: success@simulator.amazonses.com\r\nSubject: Bulk ${i}\r\nMessage-ID: <bulk-${i}-${Date.now()}@acme.test>\r\n\r\nNumber ${i}\r\n.`;
      ids.push(idOf(await talk.command(body)));
    }
    talk.end();
    expect(new Set(ids).size).toBe(100);
    const statuses = await waitFor(
      // One list request a round (100 GETs at once would spend the key's rate themselves).
      async () => {
        const listed = (await api.call('GET', '/emails?limit=100')).json?.data as
          | { id: string; last_event: string }[]
          | undefined;
        const byId = new Map((listed ?? []).map((email) => [email.id, email.last_event]));
        return ids.map((id) => byId.get(id));
      },
      (all) => all.every((s) => s === 'delivered'),
      60_000,
    );
    const counts: Record<string, number> = {};
    for (const status of statuses) counts[String(status)] = (counts[String(status)] ?? 0) + 1;
    expect(counts).toEqual({ delivered: 100 });
  }, 120_000);

  it('passes List-Unsubscribe and DKIM-Signature through byte for byte', async () => {
    const subject = `Bytes ${Date.now()}`;
    const unsubscribe = 'List-Unsubscribe: <https://acme.test/u?id=1>,\r\n <mailto:u@acme.test?subject=stop>';
    const dkim =
      'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme.test; s=sel;\r\n\th=from:to:subject; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;\r\n\tb=AbCdEf0123456789';
    const talk = await session();
    expect(await talk.command('MAIL FROM:<hello@acme.test>')).toMatch(/^250 /);
    expect(await talk.command('RCPT TO:<success@simulator.amazonses.com>')).toMatch(/^250 /);
    expect(await talk.command('DATA')).toMatch(/^354 /);
    const id = idOf(
      await talk.command(
        `${dkim}\r\nFrom: hello@acme.test\r\nTo: success@simulator.amazonses.com\r\nSubject: ${subject}\r\n${unsubscribe}\r\nMessage-ID: <bytes-${Date.now()}@acme.test>\r\n\r\nBody\r\n.`,
      ),
    );
    talk.end();
    expect(id).toMatch(/^em_/);
    // What the local SES received for it, as it received it.
    const stored = await waitFor(
      async () =>
        (
          (await (await fetch(`${service.viewerUrl}/store`)).json()) as { emails: Record<string, unknown>[] }
        ).emails.find((e) => e.subject === subject),
      (e) => e !== undefined,
      20_000,
    );
    const raw = Buffer.from(String(stored?.raw ?? stored?.rawData ?? ''), 'base64').toString('utf8');
    expect(raw).toContain(unsubscribe);
    expect(raw).toContain(dkim);
  });
});

describe('the SMTP relay on the local service: failed logins', () => {
  it('answers repeated bad logins 421 4.7.0, and then even the right key (no lookup)', async () => {
    // Last in this file: 127.0.0.1 stays refused for the limiter's window.
    const answers: string[] = [];
    for (let i = 0; i < 6 && !answers.at(-1)?.startsWith('421'); i++) {
      const talk = await smtpTalk(service.smtpRelay.tlsPort, { tls: { ca: service.certificate } });
      await talk.command('EHLO e2e.test');
      answers.push(await talk.command(`AUTH PLAIN ${plainAuth(`esk_wrong_${i}_0123456789abcdefghij`)}`));
      talk.end();
    }
    expect(answers.at(-1)).toMatch(/^421 4\.7\.0 /);
    expect(answers.slice(0, -1).every((a) => /^535 5\.7\.8 /.test(a))).toBe(true);
    const talk = await smtpTalk(service.smtpRelay.tlsPort, { tls: { ca: service.certificate } });
    await talk.command('EHLO e2e.test');
    expect(await talk.command(`AUTH PLAIN ${plainAuth(service.apiKey)}`)).toMatch(/^421 4\.7\.0 /);
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Resend } from 'resend';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedHttp } from '../../functions/adapters/http/guarded-http.js';
import { domainEvent } from '../../functions/domains/events.js';
import { DEFAULT_SETTINGS, type Domain } from '../../functions/domains/model.js';
import { emailEvent } from '../../functions/emails/events.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { addressProblem, urlProblem } from '../../functions/shared/targets.js';
import { deliverWebhook } from '../../functions/webhooks/deliver.js';
import {
  type Delivery,
  deliveryFor,
  FAILING_DISABLES_AFTER_MS,
  MAX_ATTEMPTS,
  messageBody,
  messageId,
  newSigningSecret,
  parseDelivery,
  RETRY_DELAYS_SECONDS,
  retryDelaySeconds,
  signature,
  signedHeaders,
  signingSecrets,
  type Webhook,
  type WebhookAttempt,
  type WebhookMessage,
} from '../../functions/webhooks/model.js';
import type { DeliveryQueue, PostResult, WebhookBreakerRepository } from '../../functions/webhooks/ports.js';
import { WebhookPublisher } from '../../functions/webhooks/publish.js';
import { expectResendShape } from '../support/resend-schema.js';

describe('signing (Standard Webhooks)', () => {
  it("matches the specification's test vector", () => {
    // https://github.com/standard-webhooks/standard-webhooks, libraries' shared test vector.
    expect(
      signature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  const secret = newSigningSecret();
  const body = JSON.stringify({ type: 'email.sent', created_at: new Date().toISOString(), data: { a: 1 } });
  const now = Math.floor(Date.now() / 1000);
  const headers = signedHeaders([secret], 'msg_1', now, body);

  it('makes secrets of 32 random bytes, whsec_-prefixed, each different', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('is accepted by the standardwebhooks package, under webhook-* and under svix-* names', () => {
    const verifier = new StandardWebhook(secret);
    expect(verifier.verify(body, headers)).toEqual(JSON.parse(body));
    // svix's verifier reads svix-id/-timestamp/-signature and checks the same scheme.
    expect(
      verifier.verify(body, {
        'webhook-id': headers['svix-id'] as string,
        'webhook-timestamp': headers['svix-timestamp'] as string,
        'webhook-signature': headers['svix-signature'] as string,
      }),
    ).toEqual(JSON.parse(body));
    expect(() => verifier.verify(`${body} `, headers)).toThrow();
    expect(() => new StandardWebhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it("is accepted by the resend SDK's webhooks.verify", () => {
    const resend = new Resend('re_test');
    const verified = resend.webhooks.verify({
      payload: body,
      headers: {
        id: headers['svix-id'] as string,
        timestamp: headers['svix-timestamp'] as string,
        signature: headers['svix-signature'] as string,
      },
      webhookSecret: secret,
    });
    expect(verified).toEqual(JSON.parse(body));
  });

  it('signs with the old secret beside the new one for 24 hours after a rotation, then only the new', () => {
    const old = newSigningSecret();
    const current = newSigningSecret();
    const rotatedAt = Date.parse('2026-11-24T10:00:00Z');
    const webhook = {
      signing_secret: current,
      previous_secret: { secret: old, until: new Date(rotatedAt + 24 * 3_600_000).toISOString() },
    };
    const during = signingSecrets(webhook, rotatedAt + 23 * 3_600_000);
    expect(during).toEqual([current, old]);
    const both = signedHeaders(during, 'msg_2', now, body);
    expect(both['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const s of [old, current]) expect(new StandardWebhook(s).verify(body, both)).toBeTruthy();
    expect(signingSecrets(webhook, rotatedAt + 24 * 3_600_000)).toEqual([current]);
  });
});

describe('retry schedule', () => {
  it("is Resend's: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then failed", () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(Array.from({ length: MAX_ATTEMPTS }, (_, i) => retryDelaySeconds(i + 1))).toEqual([
      5,
      300,
      1800,
      7200,
      18_000,
      36_000,
      36_000,
      undefined,
    ]);
    const total = RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeCloseTo(27.6, 1);
    // Every wait fits SQS's 12-hour visibility limit: a retry that cannot be parked waits there.
    expect(Math.max(...RETRY_DELAYS_SECONDS)).toBeLessThanOrEqual(12 * 3600);
  });
});

describe('message ids', () => {
  const event = emailEvent(
    'email.delivered',
    '2026-11-24T10:00:00.000Z',
    { email_id: newEmailId(), from: 'a@b.test', subject: 's', tags: {} },
    ['x@y.test'],
  );

  it('are the same for the same event and endpoint, and differ across endpoints and events', () => {
    expect(messageId('wh_a', event)).toBe(messageId('wh_a', { ...event }));
    expect(messageId('wh_a', event)).not.toBe(messageId('wh_b', event));
    expect(messageId('wh_a', event)).not.toBe(messageId('wh_a', { ...event, key: `${event.key}!` }));
    expect(messageId('wh_a', event)).toMatch(/^msg_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
  });

  it('sort as their events happened', () => {
    const later = { ...event, created_at: '2026-11-24T10:00:00.001Z' };
    expect(messageId('wh_z', later) > messageId('wh_a', event)).toBe(true);
  });

  it('make delivery messages the queue round-trips, and refuses anything else', () => {
    const delivery = deliveryFor('wh_a', event);
    expect(parseDelivery(JSON.stringify(delivery))).toEqual(delivery);
    expect(parseDelivery('{')).toBeUndefined();
    expect(parseDelivery(JSON.stringify({ ...delivery, type: 'email.nope' }))).toBeUndefined();
  });
});

describe('event payloads (Resend shapes)', () => {
  const emailId = newEmailId();
  const facts = {
    email_id: emailId,
    from: 'Acme <hello@acme.test>',
    subject: 'Your receipt',
    tags: { category: 'receipt' },
    message_id: '0100019abc-000000',
  };
  const base = (to: string[]) => ({
    email_id: emailId,
    created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    from: 'Acme <hello@acme.test>',
    to,
    subject: 'Your receipt',
    message_id: '0100019abc-000000',
    tags: { category: 'receipt' },
  });
  const at = '2026-11-24T10:00:00.000Z';

  const fixtures = {
    'email.sent': [emailEvent('email.sent', at, facts, ['a@x.test']), {}],
    'email.delivered': [emailEvent('email.delivered', at, facts, ['a@x.test']), {}],
    'email.delivery_delayed': [emailEvent('email.delivery_delayed', at, facts, ['a@x.test']), {}],
    'email.complained': [emailEvent('email.complained', at, facts, ['a@x.test']), {}],
    'email.bounced': [
      emailEvent('email.bounced', at, facts, ['a@x.test'], {
        bounce: { type: 'Permanent', subType: 'General', message: 'Permanent: General: 550 5.1.1' },
      }),
      { bounce: { type: 'Permanent', subType: 'General', message: 'Permanent: General: 550 5.1.1' } },
    ],
    'email.failed': [
      emailEvent('email.failed', at, facts, ['a@x.test'], { failed: { reason: 'MessageRejected' } }),
      { failed: { reason: 'MessageRejected' } },
    ],
    'email.suppressed': [
      emailEvent('email.suppressed', at, facts, ['a@x.test'], {
        suppressed: { type: 'Suppressed', reason: 'previous_bounce', message: 'on the list' },
      }),
      { suppressed: { type: 'Suppressed', reason: 'previous_bounce', message: 'on the list' } },
    ],
  } as const;

  for (const [type, [event, extra]] of Object.entries(fixtures))
    it(`${type}: {type, created_at, data} with the email's facts, its recipients and its detail`, () => {
      const sent = JSON.parse(messageBody(event));
      expect(Object.keys(sent)).toEqual(['type', 'created_at', 'data']);
      expect(sent).toEqual({ type, created_at: at, data: { ...base(['a@x.test']), ...extra } });
      // Tags are an object, as Resend's events carry them (not the request's list).
      expect(Array.isArray(sent.data.tags)).toBe(false);
      expect(Date.parse(sent.data.created_at)).toBeLessThanOrEqual(Date.now());
    });

  it('domain events carry the domain object with its records', () => {
    const domain: Domain = {
      id: 'dom_1',
      domain: 'acme.test',
      status: 'verified',
      sendable: true,
      ...DEFAULT_SETTINGS,
      records: [
        {
          record: 'DKIM',
          type: 'CNAME',
          name: 'a._domainkey.acme.test',
          value: 'a.dkim',
          ttl: 'Auto',
          status: 'verified',
        },
        // A tracking subdomain's records: Resend's kinds and types, in its webhook enums too.
        {
          record: 'Tracking',
          type: 'CNAME',
          name: 'links.acme.test',
          value: 'd111111abcdef8.cloudfront.net',
          ttl: 'Auto',
          status: 'pending',
        },
        {
          record: 'TrackingCAA',
          type: 'CAA',
          name: 'acme.test',
          value: '0 issue "amazon.com"',
          ttl: 'Auto',
          status: 'temporary_failure',
        },
        // Receiving's MX, which Resend's webhook events name `Receiving MX`.
        {
          record: 'Receiving',
          type: 'MX',
          name: 'acme.test',
          value: 'inbound-smtp.eu-west-1.amazonaws.com',
          priority: 10,
          ttl: 'Auto',
          status: 'verified',
        },
      ],
      created_at: at,
      checked_at: at,
    };
    for (const type of ['domain.created', 'domain.updated', 'domain.deleted'] as const) {
      const schema = {
        'domain.created': 'DomainCreatedEvent',
        'domain.updated': 'DomainUpdatedEvent',
        'domain.deleted': 'DomainDeletedEvent',
      }[type];
      expectResendShape(JSON.parse(messageBody(domainEvent(type, at, domain, 'eu-west-1'))), schema);
    }
    for (const type of ['domain.created', 'domain.updated', 'domain.deleted'] as const)
      expect(JSON.parse(messageBody(domainEvent(type, at, domain, 'eu-west-1')))).toEqual({
        type,
        created_at: at,
        data: {
          id: 'dom_1',
          name: 'acme.test',
          status: 'verified',
          created_at: at,
          region: 'eu-west-1',
          records: domain.records.map((r) =>
            r.record === 'Receiving' ? { ...r, record: 'Receiving MX' } : r,
          ),
        },
      });
  });
});

describe('the address guard', () => {
  const strict = { allowLoopback: false };
  const local = { allowLoopback: true };

  it('refuses loopback, private, link-local (metadata), unique-local and IPv4 hidden in IPv6', () => {
    for (const ip of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '2002:a00:1::1',
      '64:ff9b::a00:1',
      '224.0.0.1',
      // IPv4-compatible (deprecated, ::/96): 169.254.169.254, 127.0.0.1 and 10.0.0.1 written in hex.
      '::a9fe:a9fe',
      '::7f00:1',
      '::a00:1',
      // Elsewhere in reserved IPv6 space.
      '::1:a9fe:a9fe',
      '64:ff9b:1::a9fe:a9fe',
      '4000::1',
    ])
      expect(addressProblem(ip, strict), ip).toBeDefined();
    for (const ip of ['93.184.215.14', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(addressProblem(ip, strict), ip).toBeUndefined();
  });

  it('takes https only on AWS; locally also http to a loopback host, never to a private one', () => {
    expect(urlProblem('https://hooks.example.com/x', strict)).toBeUndefined();
    expect(urlProblem('http://hooks.example.com/x', strict)).toMatch(/https/);
    expect(urlProblem('ftp://hooks.example.com/x', strict)).toMatch(/https/);
    expect(urlProblem('https://user:pw@hooks.example.com/x', strict)).toMatch(/credentials/);
    expect(urlProblem('https://169.254.169.254/latest', strict)).toMatch(/linkLocal/);
    expect(urlProblem('https://[::1]/x', strict)).toMatch(/loopback/);
    expect(urlProblem('https://[::a9fe:a9fe]/latest', strict)).toMatch(/not a global unicast/);
    expect(urlProblem('https://localhost/x', strict)).toMatch(/loopback/);
    expect(urlProblem('http://localhost:3000/x', local)).toBeUndefined();
    expect(urlProblem('http://127.0.0.1:3000/x', local)).toBeUndefined();
    expect(urlProblem('http://10.0.0.1/x', local)).toMatch(/https/);
    expect(urlProblem('https://10.0.0.1/x', local)).toMatch(/private/);
  });

  it('refuses a public name that resolves to 10.0.0.1, when saved and at delivery', async () => {
    const http = new GuardedHttp(strict, { resolve: async () => [{ address: '10.0.0.1', family: 4 }] });
    expect(await http.check('https://hooks.example.com/x')).toMatch(/resolves to 10\.0\.0\.1 is a private/);
    const answer = await http.post('https://hooks.example.com/x', {}, '{}');
    expect(answer.status).toBe(0);
    expect(answer.response).toMatch(/endpoint refused: .*10\.0\.0\.1/);
  });

  it('refuses a name that resolves to any private address among public ones, or to none', async () => {
    const mixed = new GuardedHttp(strict, {
      resolve: async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
    });
    expect(await mixed.check('https://hooks.example.com/')).toMatch(/169\.254\.169\.254/);
    const none = new GuardedHttp(strict, {
      resolve: async () => {
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    expect(await none.check('https://nowhere.example/')).toMatch(/does not resolve \(ENOTFOUND\)/);
    const fine = new GuardedHttp(strict, { resolve: async () => [{ address: '93.184.215.14', family: 4 }] });
    expect(await fine.check('https://hooks.example.com/')).toBeUndefined();
  });

  describe('at delivery (DNS rebinding)', () => {
    let server: ReturnType<typeof createServer>;
    let port = 0;
    const seen: string[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        seen.push(req.url ?? '');
        if (req.url === '/redirect') res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        else res.writeHead(200).end('x'.repeat(5000));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('connects to the address it checked: a name that now resolves to a private address is refused', async () => {
      let answers = 0;
      // Public when saved, loopback at delivery: the connection's own lookup refuses it.
      const http = new GuardedHttp(strict, {
        resolve: async () => [{ address: answers++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }],
      });
      expect(await http.check(`https://rebind.example:${port}/`)).toBeUndefined();
      const answer = await http.post(`https://rebind.example:${port}/`, {}, '{}');
      expect(answer).toMatchObject({ status: 0, response: expect.stringMatching(/refused.*127\.0\.0\.1/) });
      expect(seen).toEqual([]);
    });

    it('locally posts to loopback, keeps 1 KB of the answer and does not follow redirects', async () => {
      const http = new GuardedHttp(local);
      const ok = await http.post(`http://localhost:${port}/ok`, {}, '{}');
      expect(ok.status).toBe(200);
      expect(ok.response).toHaveLength(1024);
      const redirect = await http.post(`http://127.0.0.1:${port}/redirect`, {}, '{}');
      expect(redirect).toMatchObject({
        status: 302,
        response: 'redirect to http://169.254.169.254/ not followed',
      });
      expect(seen).toEqual(['/ok', '/redirect']);
    });

    it('gives up on an endpoint that does not answer within the timeout', async () => {
      const silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const http = new GuardedHttp(local, { timeoutMs: 300 });
        const answer = await http.post(
          `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
          {},
          '{}',
        );
        expect(answer).toMatchObject({ status: 0, response: 'no answer within 0.3 s' });
      } finally {
        silent.closeAllConnections();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });
  });
});

/** An in-memory endpoint store for the delivery rules. */
function memoryWebhooks(webhook: Webhook) {
  const messages = new Map<string, WebhookMessage>();
  const attempts: WebhookAttempt[] = [];
  const repo: Pick<
    WebhookBreakerRepository,
    'recordAttempt' | 'failing' | 'recovered' | 'disable' | 'pause'
  > = {
    async recordAttempt(message, attempt) {
      messages.set(message.id, message);
      if (attempt) attempts.push(attempt);
    },
    async failing(_id, at, weight) {
      if (webhook.status !== 'enabled') return null;
      webhook.failing_since ??= at;
      webhook.failures = (webhook.failures ?? 0) + weight;
      return { ...webhook };
    },
    async recovered() {
      delete webhook.failing_since;
      delete webhook.failures;
      delete webhook.paused_until;
    },
    async pause(_id, until, trips, now) {
      if (webhook.paused_until && webhook.paused_until > now) return false;
      Object.assign(webhook, { paused_until: until, trips, failures: 0 });
      return true;
    },
    async disable(_id, reason, since) {
      if (webhook.failing_since !== since || webhook.status !== 'enabled') return false;
      webhook.status = 'disabled';
      webhook.disabled_reason = reason;
      return true;
    },
  };
  return { repo, messages, attempts };
}

describe('a delivery attempt', () => {
  const webhook = (): Webhook => ({
    id: 'wh_1',
    endpoint: 'https://hooks.example.com/in',
    events: ['email.delivered'],
    status: 'enabled',
    created_at: '2026-11-20T00:00:00.000Z',
    signing_secret: newSigningSecret(),
  });
  const event = emailEvent(
    'email.delivered',
    '2026-11-24T10:00:00.000Z',
    { email_id: newEmailId(), from: 'a@b.test', subject: 's', tags: {} },
    ['x@y.test'],
  );
  const delivery: Delivery = deliveryFor('wh_1', event);
  const answering = (status: number) => ({
    calls: [] as { url: string; headers: Record<string, string>; body: string }[],
    async post(url: string, headers: Record<string, string>, body: string): Promise<PostResult> {
      this.calls.push({ url, headers, body });
      return { status, durationMs: 12, response: status === 0 ? 'ECONNREFUSED' : 'ok' };
    },
  });
  let now = Date.parse('2026-11-24T10:00:00Z');
  const clock = { now: () => new Date(now) };

  it('signs the exact body, succeeds on a 2xx and clears the failing mark', async () => {
    const w = { ...webhook(), failing_since: '2026-11-23T00:00:00.000Z' };
    const store = memoryWebhooks(w);
    const sender = answering(204);
    // The real clock: the verifier refuses timestamps more than 5 minutes from now.
    expect(
      await deliverWebhook(
        { webhooks: store.repo, sender, clock: { now: () => new Date() } },
        delivery,
        3,
        w,
      ),
    ).toEqual({
      result: 'success',
    });
    const [call] = sender.calls;
    expect(call?.body).toBe(delivery.body);
    expect(new StandardWebhook(w.signing_secret).verify(call?.body ?? '', call?.headers ?? {})).toBeTruthy();
    expect(call?.headers['webhook-id']).toBe(delivery.message_id);
    expect(store.messages.get(delivery.message_id)).toMatchObject({ status: 'success', attempts: 3 });
    expect(store.attempts[0]).toMatchObject({ http_status_code: 204, duration_ms: 12, response: 'ok' });
    expect(w.failing_since).toBeUndefined();
  });

  it('retries anything else on the schedule, then fails the message after the last attempt', async () => {
    const w = webhook();
    const store = memoryWebhooks(w);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const outcome = await deliverWebhook(
        { webhooks: store.repo, sender: answering(500), clock },
        delivery,
        attempt,
        w,
      );
      const delay = retryDelaySeconds(attempt);
      expect(outcome).toMatchObject(
        delay === undefined
          ? { result: 'failed' }
          : {
              result: 'retry',
              delaySeconds: delay,
              nextAttemptAt: new Date(now + delay * 1000).toISOString(),
            },
      );
      const message = store.messages.get(delivery.message_id);
      expect(message?.status).toBe(delay === undefined ? 'failed' : 'attempting');
      expect(message?.next_attempt_at).toBe(
        delay === undefined ? null : new Date(now + delay * 1000).toISOString(),
      );
    }
    expect(store.attempts).toHaveLength(MAX_ATTEMPTS);
  });

  it('gives a replay one attempt, counted after the earlier ones', async () => {
    const w = webhook();
    const store = memoryWebhooks(w);
    const outcome = await deliverWebhook(
      { webhooks: store.repo, sender: answering(0), clock },
      { ...delivery, replay: { previous_attempts: 8 } },
      1,
      w,
    );
    expect(outcome).toMatchObject({ result: 'failed' });
    expect(store.messages.get(delivery.message_id)).toMatchObject({ status: 'failed', attempts: 9 });
  });

  it('drops messages for a deleted endpoint, and fails them for a disabled one without a request', async () => {
    const sender = answering(200);
    const w = { ...webhook(), status: 'disabled' as const };
    const store = memoryWebhooks(w);
    expect(await deliverWebhook({ webhooks: store.repo, sender, clock }, delivery, 1, null)).toEqual({
      result: 'dropped',
      why: 'deleted',
    });
    expect(await deliverWebhook({ webhooks: store.repo, sender, clock }, delivery, 1, w)).toEqual({
      result: 'dropped',
      why: 'disabled',
    });
    expect(sender.calls).toEqual([]);
    expect(store.messages.get(delivery.message_id)?.status).toBe('failed');
  });

  it('disables an endpoint whose attempts all failed for 3 days, and says why', async () => {
    const w = webhook();
    const store = memoryWebhooks(w);
    const start = now;
    await deliverWebhook({ webhooks: store.repo, sender: answering(503), clock }, delivery, 1, w);
    expect(w.status).toBe('enabled');
    now = start + FAILING_DISABLES_AFTER_MS - 1000;
    await deliverWebhook({ webhooks: store.repo, sender: answering(503), clock }, delivery, 2, w);
    expect(w.status).toBe('enabled');
    now = start + FAILING_DISABLES_AFTER_MS;
    await deliverWebhook({ webhooks: store.repo, sender: answering(503), clock }, delivery, 3, w);
    expect(w.status).toBe('disabled');
    expect(w.disabled_reason).toMatch(/every attempt since .* failed \(no 2xx for 3 days\)/);
    now = start;
  });
});

describe('the publisher', () => {
  const endpoint = (
    id: string,
    events: Webhook['events'],
    status: Webhook['status'] = 'enabled',
  ): Webhook => ({
    id,
    endpoint: `https://${id}.example.com/`,
    events,
    status,
    created_at: '2026-11-20T00:00:00.000Z',
    signing_secret: newSigningSecret(),
  });
  const event = emailEvent(
    'email.bounced',
    '2026-11-24T10:00:00.000Z',
    { email_id: newEmailId(), from: 'a@b.test', subject: 's', tags: {} },
    ['x@y.test'],
  );

  it('sends one message per subscribed, enabled endpoint, reading the endpoints afresh for each publication', async () => {
    let reads = 0;
    let list = [
      endpoint('wh_a', ['email.bounced', 'email.sent']),
      endpoint('wh_b', ['email.delivered']),
      endpoint('wh_c', ['email.bounced'], 'disabled'),
    ];
    const queued: Delivery[] = [];
    const queue: DeliveryQueue = { enqueue: async (d) => void queued.push(...d) };
    const publisher = new WebhookPublisher({
      webhooks: {
        all: async () => {
          reads++;
          return list;
        },
      },
      queue,
    });
    const now = await publisher.subscriptions();
    expect(now.wants('email.bounced')).toBe(true);
    expect(now.wants('email.complained')).toBe(false);
    await now.publish([event]);
    expect(queued.map((d) => d.webhook_id)).toEqual(['wh_a']);
    expect(reads).toBe(1);
    // An endpoint deleted, then one created, just before the next event: both count for it.
    list = [endpoint('wh_new', ['email.complained'])];
    const next = await publisher.subscriptions();
    expect(next.wants('email.bounced')).toBe(false);
    expect(next.wants('email.complained')).toBe(true);
    expect(reads).toBe(2);
  });
});

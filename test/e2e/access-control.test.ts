import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';

let service: LocalService;
let admin: ReturnType<typeof httpsClient>;

beforeAll(async () => {
  // The default limit: 10 requests per second per key.
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 20,
    domainVerifyMs: 0,
    domainCheckIntervalMs: 100,
  });
  admin = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  const domain = await admin.call('POST', '/domains', { body: { domain: 'acme.test' } });
  expect(domain.status).toBe(201);
  await waitFor(
    () => admin.call('GET', `/domains/${domain.json.id}`),
    (r) => r.json?.status === 'verified',
  );
});
afterAll(async () => {
  await admin?.close();
  await service?.stop();
});

const email = {
  from: 'Acme <hello@acme.test>',
  to: 'success@simulator.amazonses.com',
  subject: 'AC',
  text: 'x',
};
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createKey(body: Record<string, unknown>) {
  // Keys are made with the admin key; stay under its own limit.
  const created = await waitFor(
    () => admin.call('POST', '/api-keys', { body }),
    (r) => r.status !== 429,
  );
  expect(created.status).toBe(201);
  return created.json as { id: string; token: string };
}

describe('access control on the local stack (over HTTPS)', () => {
  it('a burst of 50 requests in one second with a 10/s key gets 429s with correct headers, and succeeds again after Retry-After', async () => {
    const { token } = await createKey({ name: 'burst' });
    const client = httpsClient(service.baseUrl, service.certificate, token);
    try {
      const started = Date.now();
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => client.call('GET', '/emails?limit=1')),
      );
      // One-second windows: 10 per window the burst touched (one, or two if it straddled a boundary).
      const windows = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
      const ok = responses.filter((r) => r.status === 200);
      const limited = responses.filter((r) => r.status === 429);
      expect(ok.length + limited.length).toBe(50);
      expect(ok.length).toBeGreaterThanOrEqual(10);
      expect(ok.length).toBeLessThanOrEqual(10 * windows);
      expect(limited.length).toBeGreaterThan(0);
      for (const r of responses) {
        expect(r.headers.get('ratelimit-limit')).toBe('10');
        expect(Number(r.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
        expect(Number(r.headers.get('ratelimit-reset'))).toBe(1);
      }
      for (const r of limited) {
        expect(r.json).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
        expect(r.headers.get('retry-after')).toBe('1');
        expect(r.headers.get('ratelimit-remaining')).toBe('0');
      }
      const retryAfter = Number(limited[0]?.headers.get('retry-after'));
      await pause(retryAfter * 1000);
      const after = await client.call('GET', '/emails?limit=1');
      expect(after.status).toBe(200);
      expect(after.headers.get('ratelimit-remaining')).toBe('9');
    } finally {
      await client.close();
    }
  });

  it('a sending key sends, and cannot list or read emails, create keys or add domains; revoked, it gets 401', async () => {
    const { id, token } = await createKey({ name: 'app', permission: 'sending_access' });
    const app = httpsClient(service.baseUrl, service.certificate, token);
    try {
      const sent = await app.call('POST', '/emails', { body: email });
      expect(sent.status).toBe(200);
      for (const [method, path, body] of [
        ['GET', '/emails', undefined],
        ['GET', `/emails/${sent.json.id}`, undefined],
        ['POST', '/api-keys', { name: 'escalate' }],
        ['GET', '/api-keys', undefined],
        ['POST', '/domains', { domain: 'evil.example' }],
        ['GET', '/domains', undefined],
      ] as const) {
        const response = await app.call(method, path, { body });
        expect(response.status, `${method} ${path}`).toBe(403);
        expect(response.json.name).toBe('restricted_api_key');
      }
      const listed = await admin.call('GET', '/api-keys');
      expect(listed.json.data.find((k: { id: string }) => k.id === id)).toMatchObject({
        permission: 'sending_access',
        last_used_at: expect.stringMatching(/Z$/),
      });
      expect(listed.text).not.toContain(token);

      expect((await admin.call('DELETE', `/api-keys/${id}`)).json).toEqual({
        object: 'api_key',
        id,
        deleted: true,
      });
      const revoked = await app.call('POST', '/emails', { body: email });
      expect(revoked.status).toBe(401);
      expect(revoked.json).toEqual({
        statusCode: 401,
        name: 'invalid_api_key',
        message: 'API key is invalid.',
      });
    } finally {
      await app.close();
    }
  });

  it('Idempotency-Key: replay gives the same email, another body 409, concurrent requests one email', async () => {
    const { token } = await createKey({ name: 'idem', permission: 'sending_access' });
    const app = httpsClient(service.baseUrl, service.certificate, token);
    try {
      const headers = { 'Idempotency-Key': 'order-42' };
      const first = await app.call('POST', '/emails', { body: email, headers });
      const replay = await app.call('POST', '/emails', { body: email, headers });
      expect(first.status).toBe(200);
      expect(replay.status).toBe(200);
      expect(replay.json).toEqual(first.json);
      const mismatch = await app.call('POST', '/emails', { body: { ...email, subject: 'Other' }, headers });
      expect(mismatch.status).toBe(409);
      expect(mismatch.json.name).toBe('invalid_idempotent_request');

      await pause(1100); // a fresh second of the rate limit
      const race = await Promise.all(
        Array.from({ length: 4 }, () =>
          app.call('POST', '/emails', { body: email, headers: { 'Idempotency-Key': 'race-1' } }),
        ),
      );
      const ids = new Set(race.filter((r) => r.status === 200).map((r) => r.json.id));
      expect(ids.size).toBe(1);
      for (const r of race.filter((x) => x.status !== 200))
        expect(r.json.name).toBe('concurrent_idempotent_requests');
      const [id] = [...ids];
      const delivered = await waitFor(
        () => admin.call('GET', `/emails/${id}`),
        (r) => r.json?.status === 'delivered',
      );
      expect(delivered.json.status).toBe('delivered');
      // Exactly one of those emails reached SES.
      const store = (await (await fetch(`${service.viewerUrl}/store`)).json()) as {
        emails: { subject: string }[];
      };
      expect(store.emails.filter((e) => e.subject === 'AC').length).toBe(3); // first, the race's one, the sending-key test's
    } finally {
      await app.close();
    }
  });
});

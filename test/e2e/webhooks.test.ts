import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Webhooks through the local service as on AWS: the functions that raise events, the delivery
 * queue, the delivery function POSTing to real receivers on this machine, SQS holding retries.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
// Fails its first two requests (a 500 and a 503): those messages are retried 5 s later.
let emails: Awaited<ReturnType<typeof startReceiver>>;
let domains: Awaited<ReturnType<typeof startReceiver>>;
let emailHook: { id: string; signing_secret: string };

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 500,
    domainCheckIntervalMs: 100,
    rateLimitPerSecond: 1000,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  emails = await startReceiver([500, 503]);
  domains = await startReceiver();
  // Registered before anything happens, as a user would.
  const created = await api.call('POST', '/webhooks', {
    body: {
      endpoint: emails.url,
      events: ['email.sent', 'email.delivered', 'email.bounced', 'email.suppressed', 'email.opened'],
    },
  });
  expect(created.status).toBe(201);
  emailHook = created.json;
  expect(
    (
      await api.call('POST', '/webhooks', {
        body: { endpoint: domains.url, events: ['domain.created', 'domain.updated', 'domain.deleted'] },
      })
    ).status,
  ).toBe(201);
  expect((await api.call('POST', '/domains', { body: { domain: 'acme.test' } })).status).toBe(201);
  await waitFor(
    () => api.call('GET', '/domains'),
    (r) => r.json?.data?.[0]?.status === 'verified',
  );
}, 30_000);
afterAll(async () => {
  await api?.close();
  await service?.stop();
  await emails?.close();
  await domains?.close();
});

const send = async (to: string) => {
  const sent = await api.call('POST', '/emails', {
    body: {
      from: 'Acme <hello@acme.test>',
      to,
      subject: 'Hooks',
      text: 'x',
      tags: [{ name: 'k', value: 'v' }],
    },
  });
  expect(sent.status).toBe(200);
  return sent.json.id as string;
};
const typesFor = (id: string) =>
  emails
    .accepted()
    .filter((e) => e.data.email_id === id)
    .map((e) => e.type)
    .sort();

describe('webhooks on the local service', () => {
  it('fans events out to the endpoints subscribed to them, retrying a receiver that fails first', async () => {
    const delivered = await send('success@simulator.amazonses.com');
    const bounced = await send('bounce+hooks@simulator.amazonses.com');
    await waitFor(
      async () => [typesFor(delivered).join(), typesFor(bounced).join()],
      ([a, b]) => a === 'email.delivered,email.sent' && b === 'email.bounced,email.sent',
      20_000,
    );
    expect(typesFor(delivered)).toEqual(['email.delivered', 'email.sent']);
    expect(typesFor(bounced)).toEqual(['email.bounced', 'email.sent']);
    // The two failed requests were retried under the same id, and each arrived once in the end.
    const [first, second] = emails.received;
    expect([first?.status, second?.status]).toEqual([500, 503]);
    for (const failed of [first, second]) {
      const again = emails.received.filter((r) => r.headers['webhook-id'] === failed?.headers['webhook-id']);
      expect(again.map((r) => r.status)).toEqual([failed?.status, 200]);
    }
    // Every email event went to the email endpoint only; domain events to the other only.
    expect(emails.accepted().every((e) => e.type.startsWith('email.'))).toBe(true);
    // One domain.updated per change the check saw: DKIM verified, and the MAIL FROM records
    // (set a moment later) either with it or in a later check.
    const [created, ...updates] = domains.accepted();
    expect(created?.type).toBe('domain.created');
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.length).toBeLessThanOrEqual(2);
    expect(updates.every((e) => e.type === 'domain.updated')).toBe(true);
    expect(updates.at(-1)?.data).toMatchObject({
      name: 'acme.test',
      status: 'verified',
      region: 'us-east-1',
    });
    // Only the records SES checks, in Resend's kinds (the suggested DMARC record is not among them).
    const checked = (updates.at(-1)?.data.records ?? []) as { record: string; status: string }[];
    expect(checked.map((r) => r.record)).toEqual(['DKIM', 'DKIM', 'DKIM', 'SPF', 'SPF']);
    expect(checked.map((r) => r.status)).toEqual(checked.map(() => 'verified'));
    // The retried message, as the API shows it: success after two attempts, newest first.
    const id = first?.headers['webhook-id'] as string;
    const message = await api.call('GET', `/webhooks/${emailHook.id}/events/${id}`);
    expect(message.json).toMatchObject({
      object: 'webhook_event',
      id,
      status: 'success',
      attempts: 2,
      next_attempt_at: null,
    });
    expect(message.json.payload).toEqual(JSON.parse(first?.body ?? ''));
    const attempts = await api.call('GET', `/webhooks/${emailHook.id}/events/${id}/attempts`);
    expect(attempts.json.data.map((a: { http_status_code: number }) => a.http_status_code)).toEqual([
      200, 500,
    ]);
    expect(attempts.json.data[1]).toMatchObject({ response: 'not now', duration_ms: expect.any(Number) });
  }, 30_000);

  it('raises email.suppressed for a recipient left out because it is on the suppression list', async () => {
    await waitFor(
      () => api.call('GET', '/suppressions/bounce+hooks@simulator.amazonses.com'),
      (r) => r.status === 200,
    );
    const id = await send('bounce+hooks@simulator.amazonses.com');
    await waitFor(
      async () => typesFor(id),
      (t) => t.includes('email.suppressed'),
    );
    const [event] = emails.accepted().filter((e) => e.data.email_id === id);
    expect(event).toMatchObject({
      type: 'email.suppressed',
      data: {
        to: ['bounce+hooks@simulator.amazonses.com'],
        tags: { k: 'v' },
        suppressed: { type: 'Suppressed', reason: 'previous_bounce', message: expect.any(String) },
      },
    });
    expect(typesFor(id)).toEqual(['email.suppressed']);
  });

  it('lists messages newest first and pages them with cursors', async () => {
    const all = await api.call('GET', `/webhooks/${emailHook.id}/events?limit=100`);
    const ids = all.json.data.map((m: { id: string }) => m.id);
    expect(ids.length).toBeGreaterThanOrEqual(5);
    expect([...ids].sort().reverse()).toEqual(ids);
    const page = await api.call('GET', `/webhooks/${emailHook.id}/events?limit=2&after=${ids[1]}`);
    expect(page.json.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(2, 4));
  });

  it('refuses endpoints that are not https and public, and unknown event types, in the one error shape', async () => {
    const create = (body: unknown) => api.call('POST', '/webhooks', { body });
    for (const endpoint of [
      'http://10.0.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00::1]/x',
      'ftp://example.com/x',
      'not a url',
    ]) {
      const refused = await create({ endpoint, events: ['email.sent'] });
      expect(refused.status, endpoint).toBe(400);
      expect(refused.json).toMatchObject({ name: 'validation_error', errors: [{ field: 'endpoint' }] });
    }
    expect((await create({ endpoint: emails.url, events: ['email.nope'] })).json.errors[0].field).toBe(
      'events.0',
    );
    expect((await create({ endpoint: emails.url, events: [] })).status).toBe(400);
    expect((await create({ endpoint: emails.url })).status).toBe(400);
    expect((await create({ endpoint: emails.url, events: ['email.sent'], extra: 1 })).status).toBe(400);
    const patch = await api.call('PATCH', `/webhooks/${emailHook.id}`, {
      body: { endpoint: 'https://10.1.2.3/' },
    });
    expect(patch.status).toBe(400);
    expect((await api.call('PATCH', `/webhooks/${emailHook.id}`, { body: {} })).status).toBe(400);
    // Unknown ids, well formed or not.
    expect((await api.call('GET', '/webhooks/wh_01m80n2x4cf0t8d1v2kq7w5mzs')).status).toBe(404);
    expect((await api.call('GET', '/webhooks/nope')).json).toMatchObject({ name: 'not_found' });
    expect((await api.call('GET', `/webhooks/${emailHook.id}/events/msg_nope`)).status).toBe(404);
    // The secret is shown to full-access keys as Resend does, and never in the list.
    const got = await api.call('GET', `/webhooks/${emailHook.id}`);
    expect(got.json.signing_secret).toBe(emailHook.signing_secret);
    expect(JSON.stringify((await api.call('GET', '/webhooks')).json)).not.toContain('whsec_');
  });
});

import { request } from 'node:http';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient, waitFor } from '../support/https.js';

let service: LocalService;
let api: ReturnType<typeof httpsClient>;

beforeAll(async () => {
  service = await startLocalService({
    port: 0,
    dataDir: null,
    viewerPort: 0,
    eventDelayMs: 50,
    domainVerifyMs: 1000,
    domainFailMs: 1500,
    domainCheckIntervalMs: 100,
    // These tests poll; the per-key limit has its own test (access-control.test.ts).
    rateLimitPerSecond: 1000,
  });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  // The sending domain of these tests, verified the way a user's is.
  const added = await api.call('POST', '/domains', { body: { domain: 'acme.test' } });
  expect(added.status).toBe(201);
  const verified = await waitFor(
    () => api.call('GET', '/domains'),
    (r) => r.json?.data?.[0]?.status === 'verified',
  );
  expect(verified.json.data[0]).toMatchObject({ domain: 'acme.test', status: 'verified' });
});
afterAll(async () => {
  await api?.close();
  await service?.stop();
});

const send = (body: Record<string, unknown>) =>
  api.call('POST', '/emails', {
    body: { from: 'Acme <hello@acme.test>', subject: 'E2E', text: 'Hello', ...body },
  });
const statusOf = (id: string) =>
  waitFor(
    () => api.call('GET', `/emails/${id}`),
    (r) => r.json?.status !== 'queued',
  );

describe('sending domains on the local stack', () => {
  it('add → pending → verified by the scheduled check → send from it → delivered; then delete', async () => {
    const added = await api.call('POST', '/domains', { body: { name: 'Shop.Example' } });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({
      object: 'domain',
      domain: 'shop.example',
      status: 'pending',
      region: 'us-east-1',
      dmarc_record: { type: 'TXT', name: '_dmarc.shop.example' },
    });
    expect(added.json.records.map((r: { type: string }) => r.type)).toEqual([
      'CNAME',
      'CNAME',
      'CNAME',
      'MX',
      'TXT',
    ]);
    const id = added.json.id;

    // Not verified yet: sending from it is refused, and nothing is stored.
    const early = await send({ from: 'Shop <orders@shop.example>', to: 'success@simulator.amazonses.com' });
    expect(early.status).toBe(400);
    expect(early.json.message).toContain('shop.example is not verified (status: pending)');

    // Nobody asks: the scheduled check moves it (the list reads only the table).
    // DKIM and MAIL FROM are verified separately (MAIL FROM is set a moment later), so the check
    // keeps re-reading a verified domain until its MAIL FROM records are verified too.
    type Listed = { id: string; status: string; records: { status: string }[] };
    const mine = (r: { json?: { data?: Listed[] } }) => r.json?.data?.find((d) => d.id === id);
    const listed = await waitFor(
      () => api.call('GET', '/domains'),
      (r) => mine(r)?.status === 'verified' && !!mine(r)?.records.every((x) => x.status !== 'pending'),
    );
    expect(mine(listed)?.status).toBe('verified');
    expect(mine(listed)?.records.map((x) => x.status)).toEqual([
      'verified',
      'verified',
      'verified',
      'verified',
      'verified',
    ]);
    expect((await api.call('GET', `/domains/${id}`)).json.status).toBe('verified');
    expect((await api.call('POST', `/domains/${id}/verify`)).json).toMatchObject({ id, status: 'verified' });

    const sent = await send({ from: 'Shop <orders@shop.example>', to: 'success@simulator.amazonses.com' });
    expect(sent.status).toBe(200);
    expect((await statusOf(sent.json.id)).json.status).toBe('delivered');

    const again = await api.call('POST', '/domains', { body: { domain: 'shop.example' } });
    expect(again.status).toBe(409);
    expect(again.json.message).toContain(id);

    expect((await api.call('DELETE', `/domains/${id}`)).json).toEqual({
      object: 'domain',
      id,
      deleted: true,
    });
    expect((await api.call('GET', `/domains/${id}`)).status).toBe(404);
    // The send function remembers a verified domain for up to a minute, so this send is still
    // accepted; SES refuses it (the identity is gone), and the email ends failed, not lost or stuck.
    const late = await send({ from: 'orders@shop.example', to: 'success@simulator.amazonses.com' });
    expect(late.status).toBe(200);
    const final = await statusOf(late.json.id);
    expect(final.json).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringContaining('not verified'),
    });
  });

  it('a domain under .invalid stays pending, then fails, and cannot send', async () => {
    const added = await api.call('POST', '/domains', { body: { domain: 'nodns.invalid' } });
    expect(added.status).toBe(201);
    const failed = await waitFor(
      () => api.call('GET', `/domains/${added.json.id}`),
      (r) => r.json?.status === 'failed',
    );
    expect(failed.json.status).toBe('failed');
    expect(failed.json.records.find((r: { type: string }) => r.type === 'CNAME').status).toBe('failed');
    expect((await send({ from: 'a@nodns.invalid', to: 'success@simulator.amazonses.com' })).status).toBe(400);
  });

  it('400 for a name that is not a host name', async () => {
    const response = await api.call('POST', '/domains', { body: { domain: 'https://acme.test/' } });
    expect(response.status).toBe(400);
    expect(response.json.message).toContain('scheme');
  });
});

describe('local service over HTTPS (npm start in-process)', () => {
  it('serves HTTPS only: a plain-HTTP request to the same port gets no HTTP answer', async () => {
    const port = new URL(service.baseUrl).port;
    const outcome = await new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/v1/emails', timeout: 3000 }, (res) =>
        resolve(`http ${res.statusCode}`),
      );
      req.on('error', (error) => resolve(`error ${(error as NodeJS.ErrnoException).code}`));
      req.on('timeout', () => {
        req.destroy();
        resolve('timeout');
      });
      req.end();
    });
    expect(outcome).not.toMatch(/^http/);
  });

  it.each([
    ['success@simulator.amazonses.com', 'delivered'],
    ['bounce@simulator.amazonses.com', 'bounced'],
    ['complaint@simulator.amazonses.com', 'delivered'],
    ['suppressionlist@simulator.amazonses.com', 'bounced'],
  ])('an email to %s is accepted as queued and ends %s', async (to, final) => {
    const sent = await send({ to });
    expect(sent.status).toBe(200);
    expect(sent.json).toEqual({
      id: expect.stringMatching(/^em_/),
      status: 'queued',
      created_at: expect.stringMatching(/Z$/),
    });
    const email = await statusOf(sent.json.id);
    expect(email.status).toBe(200);
    expect(email.json.status).toBe(final);
    expect(email.json.sent_at).toEqual(expect.stringMatching(/Z$/));
    expect(email.json.events[0]).toMatchObject({
      type: final === 'delivered' ? 'delivered' : 'bounced',
      recipients: [to],
    });
  });

  it('shows a complaint after the delivery without moving the status back, and suppresses the address for the next email', async () => {
    const to = 'complaint+next@simulator.amazonses.com';
    const sent = await send({ to });
    const email = await waitFor(
      () => api.call('GET', `/emails/${sent.json.id}`),
      (r) => r.json?.last_event === 'complained',
    );
    expect(email.json).toMatchObject({
      status: 'delivered',
      recipients: [{ email: to, kind: 'to', status: 'complained', last_event: 'complained' }],
    });
    const entry = await api.call('GET', `/suppressions/${encodeURIComponent(to)}`);
    expect(entry.json).toMatchObject({
      object: 'suppression',
      email: to,
      origin: 'complaint',
      source_id: sent.json.id,
    });
    // The next email to it: left out, nothing handed to SES, and the email says why.
    const next = await send({ to });
    const after = await statusOf(next.json.id);
    expect(after.json).toMatchObject({
      status: 'bounced',
      last_event: 'suppressed',
      sent_at: null,
      failure_reason: `every recipient is on the suppression list (previous_complaint: ${to}); nothing was sent`,
      recipients: [
        {
          email: to,
          kind: 'to',
          status: 'suppressed',
          last_event: 'suppressed',
          detail: 'previous_complaint',
          suppressed: { reason: 'previous_complaint' },
        },
      ],
    });
  });

  it('really hands the email to SES: the local SES received it (viewer and its JSON store)', async () => {
    const sent = await send({ to: ['success+store@simulator.amazonses.com'], subject: 'Stored in SES' });
    await statusOf(sent.json.id);
    const store = (await (await fetch(`${service.viewerUrl}/store`)).json()) as {
      emails: { subject: string; destination: { to: string[] } }[];
    };
    expect(store.emails.filter((e) => e.subject === 'Stored in SES')).toHaveLength(1);
    const page = await fetch(service.viewerUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('lists newest first, with limit, offset and the status filter', async () => {
    const ids: string[] = [];
    for (const to of [
      'success@simulator.amazonses.com',
      'bounce@simulator.amazonses.com',
      'success@simulator.amazonses.com',
    ]) {
      ids.push((await send({ to, subject: 'listing' })).json.id);
    }
    for (const id of ids) await statusOf(id);
    const page = await api.call('GET', '/emails?limit=3');
    expect(page.status).toBe(200);
    expect(page.json.object).toBe('list');
    expect(page.json.data.map((e: { id: string }) => e.id)).toEqual([...ids].reverse());
    expect(page.json.has_more).toBe(true);
    const second = await api.call('GET', '/emails?limit=1&offset=1');
    expect(second.json.data[0].id).toBe(ids[1]);
    const bounced = await api.call('GET', '/emails?status=bounced&limit=100');
    expect(bounced.json.data.map((e: { id: string }) => e.id)).toContain(ids[1]);
    expect(bounced.json.data.every((e: { status: string }) => e.status === 'bounced')).toBe(true);
    expect(page.json.data[0]).not.toHaveProperty('html');
  });

  it('answers every error in the one shape', async () => {
    const cases = await Promise.all([
      api.call('GET', '/emails', { key: null }),
      api.call('GET', '/emails', { key: 'esk_not_a_real_key_at_all' }),
      api.call('GET', '/nothing-here'),
      api.call('GET', '/nothing-here', { key: null }),
      api.call('DELETE', '/emails'),
      api.call('POST', '/emails', { body: '{"from": ' }),
      api.call('POST', '/emails', { body: { to: 'a@example.com' } }),
      api.call('GET', '/emails?limit=0'),
      api.call('GET', '/emails/em_01m80mv90eew9ryfvqd1ksnhes'),
      api.call('POST', '/emails', {
        body: { from: 'a@acme.test', to: 'b@example.com', subject: 's', html: 'x'.repeat(5_300_000) },
      }),
    ]);
    expect(cases.map((c) => [c.status, c.json?.name])).toEqual([
      [401, 'missing_api_key'],
      [401, 'invalid_api_key'],
      [404, 'not_found'],
      [401, 'missing_api_key'],
      [405, 'method_not_allowed'],
      [400, 'validation_error'],
      [400, 'validation_error'],
      [400, 'validation_error'],
      [404, 'not_found'],
      [413, 'payload_too_large'],
    ]);
    for (const c of cases) {
      expect(c.headers.get('content-type')).toMatch(/^application\/json/);
      expect(c.json.statusCode).toBe(c.status);
      expect(typeof c.json.message).toBe('string');
    }
    expect(cases[4]?.headers.get('allow')).toBe('POST, GET');
  });

  it("answers what Node's HTTP parser refuses in the same shape: 431 for headers over API Gateway's 10,240 bytes, 400 for what is not HTTP", async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const port = Number(new URL(service.baseUrl).port);
        const socket = connect(
          { host: '127.0.0.1', port, ca: service.certificate, servername: 'localhost' },
          () => socket.end(request),
        );
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk;
        });
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const parse = (answer: string) => {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      return { status: Number(head.split(' ')[1]), head, body: JSON.parse(body) };
    };
    const huge = parse(
      await raw(`GET /v1/emails HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(12_000)}\r\n\r\n`),
    );
    expect(huge.status).toBe(431);
    expect(huge.head).toMatch(/content-type: application\/json/i);
    expect(huge.body).toMatchObject({ statusCode: 431, name: 'request_header_fields_too_large' });
    const garbage = parse(await raw('NOT HTTP AT ALL\r\n\r\n'));
    expect(garbage.status).toBe(400);
    expect(garbage.body).toMatchObject({ statusCode: 400, name: 'validation_error' });
    // Malformed percent-encoding in a path is a path like any other: 404, not a crash.
    const oddPath = await api.call('GET', '/emails/%E0%A4%A');
    expect(oddPath.status).toBe(404);
    expect(oddPath.json.name).toBe('not_found');
  });
});

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHandler as makeReference } from '../../functions/handlers/get-api-reference.js';
import { makeHandler as makeOpenApi } from '../../functions/handlers/get-openapi.js';
import { API_ROUTES, ROUTES } from '../../functions/routes.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { context, httpEvent } from '../support/events.js';
import { httpsClient } from '../support/https.js';
import { startNpmStart } from '../support/npm-start.js';

/**
 * The API described: GET /v1/openapi.json and GET /docs, public routes (no key), served by the
 * service itself over HTTPS, with the headers a public page needs.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let origin: string;

beforeAll(async () => {
  service = await startLocalService({ port: 0, dataDir: null, viewerPort: 0 });
  origin = service.baseUrl.replace(/\/v1$/, '');
  api = httpsClient(origin, service.certificate, service.apiKey);
});
afterAll(async () => {
  api?.close();
  await service?.stop();
});

describe('GET /v1/openapi.json', () => {
  it('answers without a key: a valid OpenAPI 3.1 document of every route of the route table', async () => {
    const answer = await api.call('GET', '/v1/openapi.json', { key: null });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('cache-control')).toBe('public, max-age=300');
    expect(answer.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
    const doc = answer.json;
    expect(doc.openapi).toBe('3.1.0');
    expect(await new Validator().validate(doc)).toEqual({ valid: true });
    const listed = Object.entries(doc.paths as Record<string, Record<string, { 'x-permission': string }>>)
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(
          ([method, op]) => `${method.toUpperCase()} ${path} ${op['x-permission']}`,
        ),
      )
      .sort();
    expect(listed).toEqual(ROUTES.map((r) => `${r.method} ${r.path} ${r.permission}`).sort());
    // With a key it is the same document (a key changes nothing on a public page).
    const withKey = await api.call('GET', '/v1/openapi.json');
    expect(withKey.text).toBe(answer.text);
  });

  it('needs a key for any other method on its path, as every route does (401, then 405 with Allow)', async () => {
    expect((await api.call('POST', '/v1/openapi.json', { key: null })).status).toBe(401);
    const wrong = await api.call('DELETE', '/v1/openapi.json');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('HEAD on the public pages', () => {
  it('answers without a key as GET does, with no body and the length GET would send', async () => {
    for (const path of ['/v1/openapi.json', '/docs', '/']) {
      const got = await api.call('GET', path, { key: null });
      const head = await api.call('HEAD', path, { key: null });
      expect(head.status, path).toBe(200);
      expect(head.text, path).toBe('');
      for (const name of ['content-type', 'etag', 'cache-control', 'content-security-policy'])
        expect(head.headers.get(name), `${path} ${name}`).toBe(got.headers.get(name));
      expect(head.headers.get('content-length'), path).toBe(String(Buffer.byteLength(got.text)));
    }
    // A route that needs a key has no HEAD: 401 without one, as for any method.
    expect((await api.call('HEAD', '/v1/emails', { key: null })).status).toBe(401);
  });
});

describe('GET /docs', () => {
  it('is a page with every route, no script, and a policy that allows only its own inline style', async () => {
    const page = await api.call('GET', '/docs', { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline|https?:/);
    // The one inline style is allowed by its hash, and nothing else is loaded from anywhere.
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.text)?.[1] ?? '';
    const hash = `'sha256-${createHash('sha256').update(style).digest('base64')}'`;
    expect(csp).toContain(`style-src ${hash}`);
    expect(page.text).not.toMatch(/<script|<link|<img|<iframe|\son\w+=/i);
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const route of API_ROUTES)
      expect(page.text, route.path).toContain(`>${route.path.replaceAll("'", '&#39;')}<`);
    expect(page.text).toContain('href="/v1/openapi.json"');
  });
});

describe('the contract check sees every answer', () => {
  it('records each answer of this service, and of an npm start child, for the check after the file', async () => {
    const file = process.env.CONTRACT_RECORD ?? '';
    expect(file).not.toBe('');
    const marker = `/v1/emails/em_${'0'.repeat(26)}`;
    await api.call('GET', marker);
    const child = await startNpmStart({ PORT: '0', VIEWER_PORT: '0', LOCAL_IN_MEMORY: '1' });
    try {
      // Its own self-signed certificate, made for this run: not one to trust, only to reach it.
      const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
      const answer = await fetch(`${child.baseUrl}/domains`, {
        headers: { authorization: `Bearer ${child.apiKey}` },
        dispatcher,
      });
      expect(answer.status).toBe(200);
      await dispatcher.close();
    } finally {
      await child.stop();
    }
    const recorded = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { path: string; status: number; routeKey: string });
    expect(recorded).toContainEqual(
      expect.objectContaining({ path: marker, status: 404, routeKey: 'GET /v1/emails/{id}' }),
    );
    expect(recorded).toContainEqual(
      expect.objectContaining({ path: '/v1/domains', routeKey: 'GET /v1/domains' }),
    );
  });
});

describe('public handlers (Lambda)', () => {
  it('serve the same bytes to every request', async () => {
    for (const make of [makeOpenApi, makeReference]) {
      const open = make({});
      const first = await open(httpEvent({ method: 'GET', path: '/docs', token: null }), context());
      const second = await open(
        httpEvent({ method: 'GET', path: '/docs', token: 'esk_whatever' }),
        context(),
      );
      expect(first.statusCode).toBe(200);
      expect(second.body).toBe(first.body);
    }
  });
});

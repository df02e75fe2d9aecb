import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../functions/console/pages.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { httpsClient } from '../support/https.js';

/**
 * The web console's files over HTTPS from the local service: public routes (no key), only the built
 * files, with the console's strict headers, and small.
 */
let service: LocalService;
let api: ReturnType<typeof httpsClient>;
let origin: ReturnType<typeof httpsClient>;

beforeAll(async () => {
  service = await startLocalService({ port: 0, dataDir: null, viewerPort: 0 });
  api = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  origin = httpsClient(service.baseUrl.replace(/\/v1$/, ''), service.certificate);
});
afterAll(async () => {
  await api?.close();
  await origin?.close();
  await service?.stop();
});

const expectConsoleHeaders = (headers: Headers) => {
  expect(headers.get('content-security-policy')).toBe(CONSOLE_CSP);
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  // Locally no HSTS: a browser-wide entry for localhost would outlive the service.
  expect(headers.get('strict-transport-security')).toBeNull();
};

describe('the web console, served', () => {
  it('serves its page and files without a key, with a strict policy, cached by content hash', async () => {
    const index = await origin.call('GET', '/', { key: null });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expectConsoleHeaders(index.headers);
    expect(CONSOLE_CSP).toContain("script-src 'self';");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).toContain("frame-src 'none'");
    expect(CONSOLE_CSP).not.toMatch(/script-src[^;]*unsafe/);

    // No inline script or style: only elements that load the built files.
    expect(index.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(index.text).not.toMatch(/<style|\sstyle=/);
    const files = [...index.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(files.map((f) => f.replace(/-[A-Z0-9]+\./, '-HASH.'))).toEqual([
      '/assets/main-HASH.css',
      '/assets/main-HASH.js',
    ]);

    let gzipped = gzipSync(index.text).length;
    for (const file of files) {
      const answer = await origin.call('GET', file, { key: null });
      expect(answer.status, file).toBe(200);
      expect(answer.headers.get('content-type')).toBe(
        file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      );
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(answer.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
      expectConsoleHeaders(answer.headers);
      gzipped += gzipSync(answer.text).length;
    }
    // The first load (the page, its script and its style sheet) under 150 KB gzipped.
    expect(gzipped).toBeLessThan(150 * 1024);
  });

  it('answers 404 in the error shape for a file it did not build', async () => {
    for (const name of ['main.js', 'nope-ABC123.js', '__proto__', 'toString', '..%2Fpackage.json']) {
      const answer = await origin.call('GET', `/assets/${name}`, { key: null });
      expect(answer.status, name).toBe(404);
      expect(answer.json).toEqual({ statusCode: 404, name: 'not_found', message: 'No such file.' });
    }
    // Other methods stay behind the key, like every route.
    expect((await origin.call('POST', '/', { key: null })).status).toBe(401);
  });
});

import { Agent, fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { type NpmStart, startNpmStart } from '../support/npm-start.js';

/**
 * What `npm start` prints while it runs: one readable line per request (a JSON line with
 * LOG_FORMAT=json), the functions' INFO lines only in JSON, and the key and the addresses again on
 * Enter and when it stops, so requests never scroll them away for good.
 */
const ports = { PORT: '0', VIEWER_PORT: '0', INBOUND_SMTP_PORT: '0', LOCAL_IN_MEMORY: '1' };
const KEY = 'esk_output_check_key_0123456789';

/** Its own self-signed certificate, made for this run: not one to trust, only to reach it. */
const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
const call = (run: NpmStart, method: string, path: string, body?: unknown) =>
  fetch(`${run.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    dispatcher,
  });

/** What it printed after its banner. */
const printedSince = (run: NpmStart) => run.output().slice(run.output().indexOf('Ctrl+C'));

const until = async (what: string, done: () => boolean | Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe('npm start’s output', () => {
  it('is one readable line per request, no function INFO line, and the key again on Enter and at the end', async () => {
    // LOG_LEVEL unset, as a user runs it.
    const run = await startNpmStart({ ...ports, DEV_API_KEY: KEY, LOG_LEVEL: '' }, [], { stdin: true });
    try {
      expect((await call(run, 'GET', '/domains')).status).toBe(200);
      expect((await call(run, 'POST', '/domains', { domain: 'acme.test' })).status).toBe(201);
      // The domain check runs every second and logged each run at INFO: a line a second.
      await until('the domain verified', async () =>
        ((await (await call(run, 'GET', '/domains')).json()) as { data: { status: string }[] }).data.some(
          (d) => d.status === 'verified',
        ),
      );
      await until('the request lines', () => /200 {2}GET \/v1\/domains/.test(printedSince(run)));
      const lines = printedSince(run).split('\n').slice(1).filter(Boolean);
      const requests = lines.filter((line) =>
        /^\d\d:\d\d:\d\d {2}\d{3} {2}[A-Z]+ \/\S* {2}\d+ ms$/.test(line),
      );
      expect(requests.some((line) => / 201 {2}POST \/v1\/domains /.test(` ${line} `))).toBe(true);
      expect(lines.filter((line) => !requests.includes(line))).toEqual([]);

      // Enter: the key and the addresses again.
      run.child.stdin?.write('\n');
      await until('the key again', () => printedSince(run).includes(`API key      ${KEY}`));
      expect(printedSince(run)).toContain(`Base URL     ${run.baseUrl}`);
      expect(printedSince(run)).toContain(`Sent mail    ${run.viewer}`);
    } finally {
      await run.stop();
    }
    // And when it stops.
    const stopped = run.output().slice(run.output().indexOf('Stopping.'));
    expect(stopped).toContain(`API key      ${KEY}`);
    expect(stopped).toContain(`Base URL     ${run.baseUrl}`);
  });

  it('is a JSON line per request with LOG_FORMAT=json, beside the functions’ own JSON lines', async () => {
    const run = await startNpmStart({ ...ports, DEV_API_KEY: KEY, LOG_FORMAT: 'json', LOG_LEVEL: '' });
    try {
      expect((await call(run, 'GET', '/domains')).status).toBe(200);
      expect((await call(run, 'GET', '/emails/em_none')).status).toBe(404);
      const requestLines = () =>
        printedSince(run)
          .split('\n')
          .filter((line) => line.startsWith('{') && line.includes('"message":"request"'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      await until('the request lines', () => requestLines().length >= 2);
      expect(requestLines()).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ level: 'INFO', method: 'GET', path: '/v1/domains', status: 200 }),
          expect.objectContaining({ method: 'GET', path: '/v1/emails/em_none', status: 404 }),
        ]),
      );
      for (const line of requestLines()) {
        expect(line.duration_ms).toEqual(expect.any(Number));
        expect(line.request_id).toEqual(expect.any(String));
      }
      // Every line it printed after the banner is JSON.
      for (const line of printedSince(run).split('\n').slice(1).filter(Boolean))
        expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      await run.stop();
    }
  });

  it('refuses a LOG_FORMAT it does not know, naming the ones it takes', async () => {
    const run = await startNpmStart({ ...ports, LOG_FORMAT: 'xml' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('LOG_FORMAT must be text or json, got xml');
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { requestLogRepository } from '../../functions/adapters/dynamodb/repositories.js';
import type { ApiKeyRepository } from '../../functions/api-keys/ports.js';
import { makeHandler as makeGetLog } from '../../functions/handlers/get-log.js';
import { makeHandler as makeListLogs } from '../../functions/handlers/list-logs.js';
import { httpHandler, MAX_BODY_BYTES } from '../../functions/http/middleware.js';
import { requestLogSink } from '../../functions/observability/request-log-sink.js';
import {
  bodyForLog,
  LOG_BODY_CAP_BYTES,
  LOG_LINE_MAX_BYTES,
  REDACTED,
  type RequestLogEntry,
  redact,
  requestLogLine,
} from '../../functions/request-logs/model.js';
import { parseRequestLogLine } from '../../functions/request-logs/reads.js';
import { apiDeps } from '../../functions/wiring.js';
import { REQUEST_LOG_FILTER } from '../../lib/constructs/request-logs.js';
import { context, httpEvent } from '../support/events.js';

/**
 * What a request's log line keeps, through the real middleware chain, with a key store that knows
 * every well-formed key and an endpoint that answers with the body it was sent (so both bodies
 * are logged).
 */
const anyKey = {
  findByHash: async (hash: string) => ({
    id: 'key_1',
    name: 'test',
    permission: 'full_access',
    hash,
    created_at: new Date(0).toISOString(),
  }),
  touch: async () => undefined,
} as unknown as ApiKeyRepository;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function lineOf(event: ReturnType<typeof httpEvent>) {
  const lines: string[] = [];
  const handler = httpHandler(
    { apiKeys: anyKey, log, requestLog: { write: (line) => void lines.push(line) } },
    { handler: 'echo', body: { type: 'json' } },
    async (request) => ({ statusCode: 200, body: request.body }),
  );
  const response = await handler(event, context());
  expect(lines).toHaveLength(1);
  const line = lines[0] as string;
  const entry = parseRequestLogLine(line);
  expect(entry).not.toBeNull();
  return { response, line, entry: entry as RequestLogEntry };
}

const TOKEN = `esk_${'A1b2C3d4'.repeat(5)}xyz`;
const SIGNING = `whsec_${'Zm9vYmFy'.repeat(5)}`;

describe('a request log line', () => {
  it('stays under CloudWatch Logs’ event size whatever the body’s field names, escapes or characters', async () => {
    const bodies = [
      { [`k${'x'.repeat(250_000)}`]: 1 }, // one huge field name
      { subject: '\u0001'.repeat(20_000) }, // every character escaped as \u0001 (6 bytes)
      { html: '😀'.repeat(20_000) }, // 4 bytes a character
      Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`"${i}`, '"\\'])), // escapes in names and values
    ];
    for (const body of bodies) {
      const { response, line, entry } = await lineOf(
        httpEvent({
          method: 'POST',
          path: '/v1/emails',
          token: TOKEN,
          body,
          headers: { 'user-agent': 'u'.repeat(9000) },
        }),
      );
      expect(response.statusCode).toBe(200);
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(MAX_BODY_BYTES);
      // Each body's text is escaped once more inside the line: at most twice its size.
      expect(Buffer.byteLength(line)).toBeLessThan(4 * LOG_BODY_CAP_BYTES + 4096);
      for (const text of [entry.request_body, entry.response_body]) {
        expect(Buffer.byteLength(text ?? '')).toBeLessThanOrEqual(LOG_BODY_CAP_BYTES + 64);
        expect(JSON.parse(text ?? '{}')._truncated).toBe(true);
      }
      expect(Buffer.byteLength(entry.user_agent ?? '')).toBeLessThanOrEqual(1024);
    }
  });

  it('is written for a body nested past the limit (the 400) and for values that refer to themselves', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const { response, entry } = await lineOf(
      httpEvent({ method: 'POST', path: '/v1/emails', token: TOKEN, body: deep }),
    );
    expect(response.statusCode).toBe(400);
    expect(entry.request_body).toContain('[too deep]');

    const loop: unknown[] = [];
    loop.push(loop);
    const self: Record<string, unknown> = { name: 'a' };
    self.self = self;
    for (const value of [loop, self]) {
      const text = bodyForLog(value) as string;
      expect(JSON.parse(text)._truncated).toBe(true);
      expect(text.length).toBeLessThan(LOG_BODY_CAP_BYTES + 64);
    }
    expect(bodyForLog({ n: 10n, at: new Date(0), f: () => 1 })).toBe(
      JSON.stringify({ n: '10', at: '1970-01-01T00:00:00.000Z' }),
    );
  });

  it('keeps no secret in the path or the user agent', async () => {
    const { entry } = await lineOf(
      httpEvent({
        method: 'GET',
        path: `/v1/emails/${TOKEN}`,
        headers: { 'user-agent': `curl/8 Bearer ${'t'.repeat(24)}` },
      }),
    );
    expect(entry.endpoint).toBe(`/v1/emails/${REDACTED}`);
    expect(entry.user_agent).toBe(`curl/8 ${REDACTED}`);
  });

  it('redacts credentials by field name in any case (an email’s custom headers), glued keys and presigned links', () => {
    const body = {
      headers: { Authorization: 'Basic dXNlcjpwYXNz', 'X-Api-Key': 'k-123', Cookie: 'sid=1' },
      Token: 'abc',
      Signing_Secret: SIGNING,
      subject: `key=${TOKEN} and x${TOKEN}`,
      link: 'https://b.s3.amazonaws.com/f.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abcdef',
      [TOKEN]: 'a key as a field name',
    };
    const text = bodyForLog(body) as string;
    expect(JSON.parse(text)).toEqual({
      headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED, Cookie: REDACTED },
      Token: REDACTED,
      Signing_Secret: REDACTED,
      subject: `key=${REDACTED} and x${REDACTED}`,
      link: REDACTED,
      [REDACTED]: 'a key as a field name',
    });
  });

  it('keeps no head of a secret where a long text is cut', () => {
    // Five keys before the cut shrink the text by their replacement: a key that straddled the cut
    // would have kept its first characters inside the budget.
    for (let pad = 7700; pad < 8400; pad += 3) {
      const text = `${TOKEN} `.repeat(5) + 'a'.repeat(pad) + TOKEN + 'z'.repeat(1000);
      const { value } = redact({ subject: text });
      const kept = (value as { subject: string }).subject;
      expect(kept).not.toMatch(/esk_/);
    }
  });

  it('is never longer than LOG_LINE_MAX_BYTES: past it, the bodies give way', () => {
    const entry: RequestLogEntry = {
      id: '0190a8c2-0000-7000-8000-000000000000',
      created_at: new Date(0).toISOString(),
      method: 'POST',
      endpoint: '/v1/emails',
      response_status: 200,
      user_agent: null,
      api_key_id: null,
      duration_ms: 1,
      // Text that does not compress (the line's bodies are compressed when long).
      request_body: JSON.stringify({ html: randomBytes(200_000).toString('base64') }),
      response_body: '{"id":"e"}',
    };
    const line = requestLogLine(entry);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(LOG_LINE_MAX_BYTES);
    expect(parseRequestLogLine(line)?.request_body).toBe('{"_truncated":true}');
  });
});

/**
 * CloudWatch Logs' JSON filter patterns match only log events whose message is a JSON object (the
 * AWS docs: "patterns that only match JSON log events"); `{ $.<field> = "<value>" }` then compares
 * one top-level field. This models that rule for the one pattern the stack uses.
 */
function filterMatches(pattern: string, message: string): boolean {
  const parts = /^\{ \$\.(\w+) = "([^"]*)" \}$/.exec(pattern);
  if (!parts) throw new Error(`not modelled: ${pattern}`);
  let event: unknown;
  try {
    event = JSON.parse(message);
  } catch {
    return false;
  }
  return (
    typeof event === 'object' &&
    event !== null &&
    (event as Record<string, unknown>)[parts[1] as string] === parts[2]
  );
}

describe('what Lambda delivers of a request-log line, the filter pattern and the writer’s parser', () => {
  const entry: RequestLogEntry = {
    id: '0190a8c2-0000-7000-8000-000000000001',
    created_at: '2026-01-01T00:00:00.000Z',
    method: 'POST',
    endpoint: '/v1/emails',
    response_status: 200,
    user_agent: 'resend-node:6.38.0',
    api_key_id: 'key_1',
    duration_ms: 3.25,
    request_body: '{"subject":"a\\tb\\nc"}',
    response_body: '{"id":"e"}',
  };
  const line = requestLogLine(entry);
  const requestId = 'c793869b-ee49-115b-a5b6-4fd21e8dedac';

  it('on Lambda, the sink writes the line to stdout itself, on one line (no console.* prefix)', () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const log = vi.spyOn(console, 'log');
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'EmailService-HttpSendEmail');
    try {
      requestLogSink.write(line);
    } finally {
      vi.unstubAllEnvs();
      write.mockRestore();
    }
    expect(log).not.toHaveBeenCalled();
    log.mockRestore();
    expect(written).toEqual([`${line}\n`]);
    expect(line).not.toContain('\n');
  });

  it('text format (the functions’ format): the raw stdout line arrives as the message, and both match', () => {
    // Lambda makes each line written to stdout one event; its message is the line (with or without the newline).
    for (const message of [line, `${line}\n`]) {
      expect(filterMatches(REQUEST_LOG_FILTER, message)).toBe(true);
      expect(parseRequestLogLine(message)).toEqual(entry);
    }
  });

  it('a line written with console.log (text prefix) or under the JSON log format is not a JSON object with the field: the filter would miss it, the parser still reads it', () => {
    const prefixed = `2026-01-01T00:00:00.000Z\t${requestId}\tINFO\t${line}\n`;
    const wrapped = JSON.stringify({
      timestamp: '2026-01-01T00:00:00.000Z',
      level: 'INFO',
      requestId,
      message: line,
    });
    for (const message of [prefixed, wrapped]) {
      expect(filterMatches(REQUEST_LOG_FILTER, message)).toBe(false);
      expect(parseRequestLogLine(message)).toEqual(entry);
    }
    // So the line must stay a raw stdout write, and the functions must log as text: asserted in
    // test/infra/request-logs.test.ts (no LoggingConfig of JSON format on the API functions).
  });

  it('other lines of the log group are neither matched nor parsed', () => {
    const others = [
      `START RequestId: ${requestId} Version: $LATEST`,
      `REPORT RequestId: ${requestId}\tDuration: 3.1 ms`,
      JSON.stringify({ level: 'INFO', message: 'sent', service: 'EmailService' }), // Powertools
      JSON.stringify({ level: 'WARN', message: `looks like ${line.slice(0, 40)}` }),
      JSON.stringify({ log_type: 'api_request', id: 'not-a-uuid' }),
    ];
    for (const message of others) {
      expect(parseRequestLogLine(message)).toBeNull();
    }
    expect(filterMatches(REQUEST_LOG_FILTER, others[2] as string)).toBe(false);
  });
});

describe('request logs turned off (the stack’s requestLogs=false: REQUEST_LOGS=false on the API functions)', () => {
  const withEnv = <T>(env: Record<string, string>, build: () => T): T => {
    for (const [key, value] of Object.entries({ TABLE_NAME: 't', RATE_LIMIT_PER_SECOND: '10', ...env }))
      vi.stubEnv(key, value);
    try {
      return build();
    } finally {
      vi.unstubAllEnvs();
    }
  };

  it('an API function emits no line, and the log routes answer 404 saying logs are off', async () => {
    const deps = withEnv({ REQUEST_LOGS: 'false' }, () =>
      apiDeps('list-logs', { requestLogs: requestLogRepository }),
    );
    expect(deps.requestLog).toBeUndefined();
    expect(deps.requestLogsOff).toBe(true);
    const event = httpEvent({ method: 'GET', path: '/v1/logs', token: TOKEN });
    const listed = await makeListLogs({ ...deps, apiKeys: anyKey, rateLimit: undefined, log })(
      event,
      context(),
    );
    expect(listed.statusCode).toBe(404);
    expect(JSON.parse(listed.body ?? '')).toMatchObject({
      name: 'not_found',
      message: expect.stringMatching(/request logs are turned off/i),
    });
    const id = '0190a8c2-0000-7000-8000-000000000000';
    const got = await makeGetLog({ ...deps, apiKeys: anyKey, rateLimit: undefined, log })(
      httpEvent({ method: 'GET', path: `/v1/logs/${id}`, token: TOKEN, pathParameters: { id } }),
      context(),
    );
    expect(got.statusCode).toBe(404);
    expect(got.body).toMatch(/turned off/);
  });

  it('on by default (the variable absent), and a value other than true or false is refused', () => {
    const deps = withEnv({}, () => apiDeps('get-log'));
    expect(deps.requestLog).toBe(requestLogSink);
    expect(deps.requestLogsOff).toBe(false);
    expect(() => withEnv({ REQUEST_LOGS: 'no' }, () => apiDeps('get-log'))).toThrow(/REQUEST_LOGS/);
  });
});

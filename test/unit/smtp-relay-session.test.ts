import { describe, expect, it } from 'vitest';
import { ApiError, validationError } from '../../functions/shared/errors.js';
import { PROXY_V2_SIGNATURE, proxyV2Header, readProxyV2 } from '../../functions/smtp-relay/proxy.js';
import {
  AuthLimiter,
  headerFields,
  messageSummary,
  outcomeOf,
  recipientRefusal,
} from '../../functions/smtp-relay/session.js';

/** The relay's rules apart from sockets (functions/smtp-relay/session.ts, proxy.ts). */
describe('the SMTP answer for each of the pipeline errors', () => {
  const code = (error: unknown) => {
    const { reply } = outcomeOf(error);
    return `${reply.code} ${reply.enhanced}`;
  };
  it('says why, and never answers a failure of ours with a 5xx', () => {
    expect(code(new ApiError(401, 'invalid_api_key', 'API key is invalid.'))).toBe('535 5.7.8');
    expect(code(new ApiError(403, 'restricted_api_key', 'only acme.test'))).toBe('550 5.7.1');
    const unverified = 'The domain x.test is not verified.';
    expect(code(validationError(unverified, [{ field: 'from', message: unverified }]))).toBe('550 5.7.1');
    expect(code(validationError('Too many recipients', [{ field: 'to', message: 'x' }]))).toBe('554 5.6.0');
    expect(code(new ApiError(413, 'payload_too_large', 'too big'))).toBe('552 5.3.4');
    const rate = new ApiError(429, 'rate_limit_exceeded', 'Too many requests.', undefined, {
      'retry-after': '3',
    });
    expect(code(rate)).toBe('451 4.7.1');
    expect(outcomeOf(rate).reply.text).toMatch(/try again in 3 s$/);
    expect(code(new ApiError(409, 'concurrent_idempotent_requests', 'in progress'))).toBe('451 4.3.0');
    expect(code(new ApiError(409, 'invalid_idempotent_request', 'another body'))).toBe('554 5.7.0');
    expect(code(new ApiError(503, 'service_unavailable', 'later'))).toBe('451 4.3.0');
    expect(code(new Error('boom'))).toBe('451 4.3.0');
    expect(outcomeOf(new Error('boom')).status).toBe(500);
  });
});

describe('the relay limits', () => {
  it('refuses an address after its failed logins, until the window ends', () => {
    const limiter = new AuthLimiter(3, 1000);
    expect(limiter.failed('a', 0)).toBe(false);
    expect(limiter.failed('a', 10)).toBe(false);
    expect(limiter.blocked('b', 10)).toBe(false);
    expect(limiter.failed('a', 20)).toBe(true);
    expect(limiter.blocked('a', 500)).toBe(true);
    expect(limiter.blocked('b', 500)).toBe(false);
    expect(limiter.blocked('a', 1000)).toBe(false);
  });
  it('answers the 51st recipient 452 4.5.3, unless it repeats one already taken', () => {
    const taken = Array.from({ length: 50 }, (_, i) => `r${i}@x.test`);
    expect(recipientRefusal(taken.slice(0, 49), 'new@x.test', 50)).toBeNull();
    expect(recipientRefusal(taken, 'new@x.test', 50)).toMatchObject({ code: 452, enhanced: '4.5.3' });
    expect(recipientRefusal(taken, 'R3@x.test', 50)).toBeNull();
  });
});

describe('what the request log keeps of a message', () => {
  it('the envelope, the size, the Message-ID and the decoded subject, folded headers unfolded', () => {
    const raw = Buffer.from(
      'From: Acme <hello@acme.test>\r\nSubject: =?UTF-8?B?SMOpbGxv?=\r\n folded\r\nMessage-ID: <abc@acme.test>\r\n\r\nSubject: not a header\r\n',
    );
    expect(headerFields(raw, ['subject'])).toEqual({ subject: '=?UTF-8?B?SMOpbGxv?= folded' });
    expect(messageSummary(raw, { mailFrom: 'hello@acme.test', recipients: ['a@b.test'] })).toEqual({
      mail_from: 'hello@acme.test',
      rcpt_to: ['a@b.test'],
      size: raw.byteLength,
      message_id: 'abc@acme.test',
      from: 'Acme <hello@acme.test>',
      subject: 'Héllo folded',
    });
  });
});

describe('the PROXY protocol v2 header', () => {
  it('gives the client address (IPv4 and IPv6), waits for the rest, and refuses anything else', () => {
    const v4 = proxyV2Header({ address: '203.0.113.7', port: 40000 }, { address: '10.0.0.5', port: 2465 });
    expect(readProxyV2(v4)).toEqual({
      complete: true,
      consumed: v4.length,
      source: { address: '203.0.113.7', port: 40000 },
    });
    expect(readProxyV2(v4.subarray(0, 20))).toEqual({ complete: false });
    expect(readProxyV2(v4.subarray(0, 5))).toEqual({ complete: false });
    const v6 = proxyV2Header({ address: '2001:db8::7', port: 1 }, { address: '2001:db8::1', port: 2 });
    expect(readProxyV2(Buffer.concat([v6, Buffer.from('EHLO x\r\n')]))).toMatchObject({
      consumed: v6.length,
      source: { address: '2001:db8:0:0:0:0:0:7', port: 1 },
    });
    // LOCAL (the load balancer's own connection): no address, the connection's own stands.
    const local = Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x20, 0x00, 0x00, 0x00])]);
    expect(readProxyV2(local)).toEqual({ complete: true, consumed: 16 });
    expect(() => readProxyV2(Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n'))).toThrow(/not a PROXY/);
    const v1 = Buffer.from(v4);
    v1[12] = 0x11;
    expect(() => readProxyV2(v1)).toThrow(/version/);
  });
});

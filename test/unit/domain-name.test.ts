import { describe, expect, it } from 'vitest';
import { createDomainSchema, normalizeDomainName } from '../../functions/domains/model.js';

const ok = (input: string) => normalizeDomainName(input);
const error = (input: string) => {
  const result = normalizeDomainName(input);
  if (!('error' in result)) throw new Error(`accepted ${input} as ${result.domain}`);
  return result.error;
};

describe('domain names', () => {
  it('accepts host names, lower-cases them and drops one trailing dot', () => {
    expect(ok('acme.com')).toEqual({ domain: 'acme.com' });
    expect(ok('Mail.ACME.co.uk')).toEqual({ domain: 'mail.acme.co.uk' });
    expect(ok('acme.com.')).toEqual({ domain: 'acme.com' });
    expect(ok('a-b.c0m.io')).toEqual({ domain: 'a-b.c0m.io' });
    expect(ok('xn--mller-kva.de')).toEqual({ domain: 'xn--mller-kva.de' });
  });

  it('stores an internationalised name in its A-label (punycode) form', () => {
    expect(ok('Müller.de')).toEqual({ domain: 'xn--mller-kva.de' });
    expect(ok('bücher.example')).toEqual({ domain: 'xn--bcher-kva.example' });
  });

  it('names the problem with everything that is not a host name', () => {
    expect(error('')).toContain('empty');
    expect(error('acme .com')).toContain('spaces');
    expect(error(' acme.com')).toContain('spaces');
    expect(error('https://acme.com')).toContain('scheme');
    expect(error('acme.com/path')).toContain('path');
    expect(error('acme.com?x=1')).toContain('path');
    expect(error('hello@acme.com')).toContain('email address');
    expect(error('192.168.0.1')).toContain('IP address');
    expect(error('[::1]')).toContain('IP address');
    expect(error('acme.com:25')).toContain('host:port');
    expect(error('localhost')).toContain('two labels');
    expect(error('acme..com')).toContain('empty label');
    expect(error('.acme.com')).toContain('empty label');
    expect(error('acme.com..')).toContain('empty label');
    expect(error('-acme.com')).toContain('invalid label "-acme"');
    expect(error('acme-.com')).toContain('invalid label');
    expect(error('ac_me.com')).toContain('invalid label');
    expect(error('acme.123')).toContain('top-level domain');
    expect(error(`${'a'.repeat(64)}.com`)).toContain('at most 63');
    const long = Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.');
    expect(error(`${long}.com`)).toContain('at most 253');
  });

  it('accepts the longest legal label and name', () => {
    expect(ok(`${'a'.repeat(63)}.com`)).toEqual({ domain: `${'a'.repeat(63)}.com` });
    const name = `${Array.from({ length: 4 }, () => 'a'.repeat(61)).join('.')}.abcde`;
    expect(name).toHaveLength(253);
    expect(ok(name)).toEqual({ domain: name });
  });
});

describe('POST /v1/domains body', () => {
  it("takes {domain}, or Resend's {name}, normalised", () => {
    expect(createDomainSchema.parse({ domain: 'ACME.com' })).toMatchObject({ domain: 'acme.com' });
    expect(createDomainSchema.parse({ name: 'acme.com.' })).toMatchObject({ domain: 'acme.com' });
    expect(createDomainSchema.parse({ domain: 'acme.com', name: 'ACME.COM' })).toMatchObject({
      domain: 'acme.com',
    });
    // Resend's other fields: settings (tracking and receiving off by default), the MAIL FROM label, the region.
    expect(createDomainSchema.parse({ name: 'acme.com' }).settings).toEqual({
      open_tracking: false,
      click_tracking: false,
      tls: 'opportunistic',
      receiving: false,
    });
    expect(
      createDomainSchema.parse({
        name: 'acme.com',
        region: 'eu-west-1',
        custom_return_path: 'Bounces',
        open_tracking: true,
        tls: 'enforced',
        tracking_subdomain: 'links.acme.com',
        capabilities: { sending: 'enabled', receiving: 'disabled' },
      }),
    ).toEqual({
      domain: 'acme.com',
      region: 'eu-west-1',
      settings: {
        open_tracking: true,
        click_tracking: false,
        tls: 'enforced',
        tracking_subdomain: 'links',
        custom_return_path: 'bounces',
        receiving: false,
      },
    });
    // Receiving is taken here (whether the stack's Region receives is the use case's to say).
    expect(
      createDomainSchema.parse({ name: 'acme.com', capabilities: { receiving: 'enabled' } }).settings
        .receiving,
    ).toBe(true);
  });

  it('refuses a missing name, two different names, unknown fields and non-strings', () => {
    expect(createDomainSchema.safeParse({}).success).toBe(false);
    expect(createDomainSchema.safeParse({ domain: 'a.com', name: 'b.com' }).success).toBe(false);
    expect(createDomainSchema.safeParse({ domain: 'a.com', regions: 'eu' }).success).toBe(false);
    expect(createDomainSchema.safeParse({ domain: 'a.com', tls: 'required' }).success).toBe(false);
    expect(createDomainSchema.safeParse({ domain: 'a.com', tracking_subdomain: 'a b' }).success).toBe(false);
    expect(createDomainSchema.safeParse({ domain: 'a.com', open_tracking: 'yes' }).success).toBe(false);
    // Every domain here sends: sending stays enabled, with or without receiving.
    for (const capabilities of [
      { sending: 'disabled' },
      { sending: 'disabled', receiving: 'enabled' },
      { receiving: 'on' },
      { receiving: 'enabled', forwarding: 'enabled' },
    ])
      expect(createDomainSchema.safeParse({ domain: 'a.com', capabilities }).success).toBe(false);
    expect(createDomainSchema.safeParse({ domain: 42 }).success).toBe(false);
  });
});

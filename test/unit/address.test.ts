import { describe, expect, it } from 'vitest';
import { domainOf, formatAddress, parseAddress } from '../../functions/shared/address.js';

describe('parseAddress', () => {
  it.each([
    ['a@acme.com', { email: 'a@acme.com' }],
    ['  a@acme.com ', { email: 'a@acme.com' }],
    ['Acme <a@acme.com>', { name: 'Acme', email: 'a@acme.com' }],
    ['"Acme, Inc." <hello+x@mail.acme.co.uk>', { name: 'Acme, Inc.', email: 'hello+x@mail.acme.co.uk' }],
    ['<a@acme.com>', { email: 'a@acme.com' }],
    ['a@xn--bcher-kva.example', { email: 'a@xn--bcher-kva.example' }],
    ['José <jose@bücher.example>', { name: 'José', email: 'jose@xn--bcher-kva.example' }],
    ['"Say \\"hi\\"" <a@acme.com>', { name: 'Say "hi"', email: 'a@acme.com' }],
  ])('accepts %s', (input, expected) => {
    expect(parseAddress(input)).toEqual(expected);
  });

  it.each([
    'acme.com',
    'a@',
    '@acme.com',
    'a@acme',
    'a@acme.c',
    'a b@acme.com',
    'a@-acme.com',
    'a..b@acme.com',
    'Acme <a@acme.com',
    'Ac<me <a@acme.com>',
    `${'x'.repeat(65)}@acme.com`,
    'a@acme.com\r\nBcc: victim@example.com',
    'Acme\n <a@acme.com>',
    'José <josé@bücher.example>', // a non-ASCII local part needs SMTPUTF8, which SES does not offer
  ])('refuses %j', (input) => {
    expect(parseAddress(input)).toHaveProperty('error');
  });

  it.each([
    [{ email: 'a@acme.com' }, 'a@acme.com'],
    [{ name: 'Acme', email: 'a@acme.com' }, 'Acme <a@acme.com>'],
    [{ name: 'Acme, Inc.', email: 'a@acme.com' }, '"Acme, Inc." <a@acme.com>'],
    [{ name: 'Say "hi" \\o/', email: 'a@acme.com' }, '"Say \\"hi\\" \\\\o/" <a@acme.com>'],
  ])('formats %j as %s, and reads it back', (address, text) => {
    expect(formatAddress(address)).toBe(text);
    expect(parseAddress(text)).toEqual(address);
  });

  it('gives the domain in lower case', () => {
    expect(domainOf('Hello@Mail.ACME.com')).toBe('mail.acme.com');
  });
});

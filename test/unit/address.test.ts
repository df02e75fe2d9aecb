import { describe, expect, it } from 'vitest';
import { domainOf, parseAddress } from '../../functions/core/address.js';

describe('parseAddress', () => {
  it.each([
    ['a@acme.com', { email: 'a@acme.com' }],
    ['  a@acme.com ', { email: 'a@acme.com' }],
    ['Acme <a@acme.com>', { name: 'Acme', email: 'a@acme.com' }],
    ['"Acme, Inc." <hello+x@mail.acme.co.uk>', { name: 'Acme, Inc.', email: 'hello+x@mail.acme.co.uk' }],
    ['<a@acme.com>', { email: 'a@acme.com' }],
    ['a@xn--bcher-kva.example', { email: 'a@xn--bcher-kva.example' }],
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
  ])('refuses %j', (input) => {
    expect(parseAddress(input)).toHaveProperty('error');
  });

  it('gives the domain in lower case', () => {
    expect(domainOf('Hello@Mail.ACME.com')).toBe('mail.acme.com');
  });
});

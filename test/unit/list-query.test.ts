import { describe, expect, it } from 'vitest';
import { listApiKeysQuerySchema } from '../../functions/api-keys/requests.js';
import { listDomainsQuerySchema } from '../../functions/domains/model.js';
import { listEmailsQuerySchema } from '../../functions/emails/list-query.js';
import { parseInput } from '../../functions/http/middleware.js';

const parse = (query: Record<string, string>) => parseInput(listEmailsQuerySchema, query);

describe('GET /v1/emails query', () => {
  it('defaults to limit 20, offset 0, no status', () => {
    expect(parse({})).toEqual({ limit: 20, offset: 0 });
  });

  it('accepts limit 1..100, any offset up to the bound, and each status', () => {
    expect(parse({ limit: '1' }).limit).toBe(1);
    expect(parse({ limit: '100', offset: '40', status: 'bounced' })).toEqual({
      limit: 100,
      offset: 40,
      status: 'bounced',
    });
    for (const status of ['queued', 'delivered', 'bounced', 'failed'])
      expect(parse({ status }).status).toBe(status);
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ limit: '2.5' }, 'limit'],
    [{ limit: '1e1' }, 'limit'],
    [{ limit: '' }, 'limit'],
    [{ offset: '-1' }, 'offset'],
    [{ offset: '1.5' }, 'offset'],
    [{ offset: 'abc' }, 'offset'],
    [{ offset: '10001' }, 'offset'],
    [{ status: 'sent' }, 'status'],
    [{ status: 'DELIVERED' }, 'status'],
    [{ page: '2' }, 'page'],
  ])('refuses %j with 400 naming %s', (query, field) => {
    expect(() => parse(query)).toThrowError(
      expect.objectContaining({ statusCode: 400, errorName: 'validation_error' }),
    );
    try {
      parse(query);
    } catch (error) {
      expect((error as { fieldErrors: { field: string }[] }).fieldErrors.map((f) => f.field)).toEqual([
        field,
      ]);
    }
  });
});

describe('cursor pages: after and before, as the resend SDK sends them', () => {
  const id = 'em_01m84ve61ce6rrdd8rjb5j67r6';

  it('takes after or before, with a limit and a status', () => {
    expect(parse({ after: id })).toEqual({ limit: 20, offset: 0, after: id });
    expect(parse({ before: id, limit: '5', status: 'delivered' })).toEqual({
      limit: 5,
      offset: 0,
      before: id,
      status: 'delivered',
    });
  });

  it.each([
    [{ after: id, before: id }, 'before'],
    [{ after: id, offset: '0' }, 'offset'],
    [{ before: id, offset: '20' }, 'offset'],
    [{ after: 'dom_01m84ve61ce6rrdd8rjb5j67r6' }, 'after'],
    [{ before: '' }, 'before'],
    [{ after: 'em_nope' }, 'after'],
  ])('refuses %j with 400 naming %s', (query, field) => {
    let caught: unknown;
    try {
      parse(query);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ statusCode: 400, errorName: 'validation_error' });
    expect((caught as { fieldErrors: { field: string }[] }).fieldErrors.map((f) => f.field)).toEqual([field]);
  });

  it('checks cursors of domains and API keys against their own ids', () => {
    const domain = 'dom_01m84ve61ce6rrdd8rjb5j67r6';
    expect(parseInput(listDomainsQuerySchema, { after: domain })).toEqual({
      limit: 20,
      offset: 0,
      after: domain,
    });
    expect(() => parseInput(listDomainsQuerySchema, { after: id })).toThrowError(
      expect.objectContaining({ statusCode: 400 }),
    );
    const key = 'key_01m84ve61ce6rrdd8rjb5j67r6';
    expect(parseInput(listApiKeysQuerySchema, { before: key })).toEqual({
      limit: 20,
      offset: 0,
      before: key,
    });
    expect(() => parseInput(listApiKeysQuerySchema, { before: domain })).toThrowError(
      expect.objectContaining({ statusCode: 400 }),
    );
  });
});

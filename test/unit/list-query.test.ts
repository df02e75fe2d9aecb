import { describe, expect, it } from 'vitest';
import { listEmailsQuerySchema } from '../../functions/core/list.js';
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

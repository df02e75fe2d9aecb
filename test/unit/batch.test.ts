import { beforeAll, describe, expect, it } from 'vitest';
import { batchIds, parseBatch, parseBatchValidation } from '../../functions/emails/batch.js';
import { loadScheduleReader } from '../../functions/emails/schedule.js';
import type { ApiError } from '../../functions/shared/errors.js';
import { isEmailId, newEmailId } from '../../functions/shared/ids.js';

// Times in words are read by a module loaded on first use (handlers load it; these call the parser).
beforeAll(() => loadScheduleReader('in 1 hour'));

const email = (over: Record<string, unknown> = {}) => ({
  from: 'Acme <hello@acme.com>',
  to: 'a@example.com',
  subject: 'Hi',
  text: 'Hello',
  ...over,
});
const thrown = (run: () => unknown): ApiError => {
  try {
    run();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('expected an error');
};

describe('x-batch-validation', () => {
  it('is strict by default, or as given; anything else is a 400', () => {
    expect(parseBatchValidation(undefined)).toBe('strict');
    expect(parseBatchValidation('strict')).toBe('strict');
    expect(parseBatchValidation('permissive')).toBe('permissive');
    expect(thrown(() => parseBatchValidation('lenient'))).toMatchObject({
      statusCode: 400,
      fieldErrors: [
        { field: 'x-batch-validation', message: expect.stringContaining('strict or permissive') },
      ],
    });
  });
});

describe('a batch body', () => {
  it('is an array of 1 to 100 emails, each checked as a single send', () => {
    const { entries, errors } = parseBatch(
      [email(), email({ to: ['b@example.com', 'c@example.com'] })],
      'strict',
    );
    expect(errors).toEqual([]);
    expect(entries.map((e) => e.index)).toEqual([0, 1]);
    expect(entries[1]?.input.to.map((a) => a.email)).toEqual(['b@example.com', 'c@example.com']);
    expect(
      parseBatch(
        Array.from({ length: 100 }, () => email()),
        'strict',
      ).entries,
    ).toHaveLength(100);
  });

  it.each([[[]], [Array.from({ length: 101 }, () => email())], [email()], ['x'], [null]])(
    'refuses %j as a whole',
    (body) => {
      expect(thrown(() => parseBatch(body, 'permissive'))).toMatchObject({
        statusCode: 400,
        fieldErrors: [{ field: '(body)', message: expect.stringContaining('array of 1 to 100') }],
      });
    },
  );

  it('strict: one invalid email refuses the batch, naming every offending field by its index', () => {
    const error = thrown(() =>
      parseBatch(
        [email(), email(), email(), email({ to: 'not an address' }), email({ subject: '', extra: 1 })],
        'strict',
      ),
    );
    expect(error.statusCode).toBe(400);
    expect(error.fieldErrors?.map((f) => f.field)).toEqual(['3.to', '4.subject', '4.extra']);
    expect(error.message).toContain('3.to:');
  });

  it('permissive: the valid emails, and one error per invalid email with its index', () => {
    const { entries, errors } = parseBatch(
      [email(), email({ to: 'nope' }), email(), email({ html: undefined, text: undefined })],
      'permissive',
    );
    expect(entries.map((e) => e.index)).toEqual([0, 2]);
    expect(errors).toEqual([
      { index: 1, message: expect.stringContaining('1.to') },
      { index: 3, message: expect.stringContaining('html or text') },
    ]);
  });

  it('names attachments: a batch takes none', () => {
    const error = thrown(() =>
      parseBatch([email({ attachments: [{ filename: 'a.txt', content: 'eA==' }] })], 'strict'),
    );
    expect(error.fieldErrors).toEqual([
      { field: '0.attachments', message: expect.stringContaining('not accepted in a batch') },
    ]);
  });

  it("reads each email's scheduled_at against the request's time, naming the email it refuses", () => {
    const now = new Date('2026-11-24T10:00:00Z');
    const { entries } = parseBatch([email({ scheduled_at: 'in 1 min' }), email()], 'strict', now);
    expect(entries.map((e) => e.input.scheduled_at)).toEqual(['2026-11-24T10:01:00.000Z', undefined]);
    const error = thrown(() =>
      parseBatch([email(), email({ scheduled_at: 'yesterday at 9am' })], 'strict', now),
    );
    expect(error.fieldErrors).toEqual([
      { field: '1.scheduled_at', message: expect.stringContaining('in the past') },
    ]);
    const permissive = parseBatch([email({ scheduled_at: 'in 40 days' }), email()], 'permissive', now);
    expect(permissive.entries.map((e) => e.index)).toEqual([1]);
    expect(permissive.errors).toEqual([{ index: 0, message: expect.stringContaining('30 days') }]);
  });
});

describe('batch ids', () => {
  it('are consecutive from the first: valid, distinct, in input order, the same again for the same first id', () => {
    const first = newEmailId();
    const ids = batchIds(first, 100);
    expect(ids[0]).toBe(first);
    expect(ids.every(isEmailId)).toBe(true);
    expect(new Set(ids).size).toBe(100);
    expect([...ids].sort()).toEqual(ids);
    expect(batchIds(first, 100)).toEqual(ids);
    // A later batch's ids sort after this one's.
    expect((batchIds(newEmailId(), 1)[0] as string) > (ids.at(-1) as string)).toBe(true);
  });
});

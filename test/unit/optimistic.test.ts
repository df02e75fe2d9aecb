import { describe, expect, it } from 'vitest';
import { ApiError } from '../../functions/shared/errors.js';
import { AGAIN, MAX_OPTIMISTIC_ATTEMPTS, optimistically } from '../../functions/shared/optimistic.js';

describe('an optimistic read-modify-write (shared/optimistic.ts)', () => {
  it('answers what the attempt that held answers, trying again after each lost write', async () => {
    let attempts = 0;
    const result = await optimistically('Thing t_1', async () => (++attempts < 3 ? AGAIN : 'done'));
    expect(result).toBe('done');
    expect(attempts).toBe(3);
  });

  it(`gives up after ${MAX_OPTIMISTIC_ATTEMPTS} lost writes: puts back what it did, then a 409 naming what others keep changing`, async () => {
    let attempts = 0;
    let putBack = 0;
    let named = 'tpl_alias';
    const failing = optimistically(
      () => `Template ${named}`,
      async () => {
        attempts++;
        named = 'tpl_01';
        return AGAIN;
      },
      async () => {
        putBack++;
      },
    );
    await expect(failing).rejects.toBeInstanceOf(ApiError);
    await expect(failing).rejects.toMatchObject({
      statusCode: 409,
      message: 'Template tpl_01 is being changed by other requests; try again.',
    });
    expect([attempts, putBack]).toEqual([MAX_OPTIMISTIC_ATTEMPTS, 1]);
  });
});

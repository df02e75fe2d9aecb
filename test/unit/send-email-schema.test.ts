import { describe, expect, it } from 'vitest';
import { sendEmailSchema, toContent } from '../../functions/core/email.js';
import { ApiError } from '../../functions/core/errors.js';
import { parseInput } from '../../functions/http/middleware.js';

const valid = { from: 'Acme <hello@acme.com>', to: 'user@example.com', subject: 'Hi', text: 'Hello' };

function errorOf(input: unknown): ApiError {
  try {
    parseInput(sendEmailSchema, input);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a validation error');
}

const fieldsOf = (input: unknown) => errorOf(input).fieldErrors?.map((f) => f.field);

describe('POST /v1/emails body', () => {
  it('accepts the minimal email and normalises recipients to lists', () => {
    const content = toContent(parseInput(sendEmailSchema, valid));
    expect(content).toEqual({
      from: 'Acme <hello@acme.com>',
      to: ['user@example.com'],
      cc: [],
      bcc: [],
      reply_to: [],
      subject: 'Hi',
      html: null,
      text: 'Hello',
    });
  });

  it('accepts lists and single addresses for to, cc, bcc and reply_to', () => {
    const content = toContent(
      parseInput(sendEmailSchema, {
        ...valid,
        to: ['a@example.com', 'B <b@example.com>'],
        cc: 'c@example.com',
        bcc: ['d@example.com'],
        reply_to: 'r@example.com',
        html: '<p>x</p>',
      }),
    );
    expect(content.to).toEqual(['a@example.com', 'B <b@example.com>']);
    expect(content.cc).toEqual(['c@example.com']);
    expect(content.bcc).toEqual(['d@example.com']);
    expect(content.reply_to).toEqual(['r@example.com']);
  });

  it.each(['from', 'to', 'subject'])('requires %s', (field) => {
    const input: Record<string, unknown> = { ...valid };
    delete input[field];
    const error = errorOf(input);
    expect(error.statusCode).toBe(400);
    expect(error.errorName).toBe('validation_error');
    expect(error.fieldErrors?.map((f) => f.field)).toContain(field);
  });

  it('refuses an invalid from, and names the field', () => {
    expect(fieldsOf({ ...valid, from: 'not an address' })).toEqual(['from']);
    expect(errorOf({ ...valid, from: 'nope' }).message).toContain('from');
  });

  it('allows 1 to 50 recipients in to', () => {
    const fifty = Array.from({ length: 50 }, (_, i) => `u${i}@example.com`);
    expect(() => parseInput(sendEmailSchema, { ...valid, to: fifty })).not.toThrow();
    expect(fieldsOf({ ...valid, to: [...fifty, 'x@example.com'] })).toEqual(['to']);
    expect(fieldsOf({ ...valid, to: [] })).toEqual(['to']);
  });

  it('refuses more than 50 recipients across to, cc and bcc (SES refuses them)', () => {
    const to = Array.from({ length: 30 }, (_, i) => `t${i}@example.com`);
    const cc = Array.from({ length: 21 }, (_, i) => `c${i}@example.com`);
    expect(errorOf({ ...valid, to, cc }).message).toMatch(/at most 50 recipients/);
  });

  it('names the offending list entry', () => {
    expect(fieldsOf({ ...valid, to: ['a@example.com', 'broken'] })).toEqual(['to.1']);
  });

  it('allows a subject of 998 characters, counting characters not UTF-16 units', () => {
    expect(() => parseInput(sendEmailSchema, { ...valid, subject: 'x'.repeat(998) })).not.toThrow();
    expect(() => parseInput(sendEmailSchema, { ...valid, subject: '😀'.repeat(998) })).not.toThrow();
    expect(fieldsOf({ ...valid, subject: 'x'.repeat(999) })).toEqual(['subject']);
  });

  it('refuses an empty subject and line breaks in it (header injection)', () => {
    expect(fieldsOf({ ...valid, subject: '  ' })).toEqual(['subject']);
    expect(fieldsOf({ ...valid, subject: 'Hi\r\nBcc: x@example.com' })).toEqual(['subject']);
  });

  it('requires html or text', () => {
    const { text: _, ...noBody } = valid;
    expect(errorOf(noBody).message).toMatch(/at least one of html or text/);
    expect(() => parseInput(sendEmailSchema, { ...noBody, html: '<b>x</b>' })).not.toThrow();
  });

  it('refuses unknown fields, naming them', () => {
    const error = errorOf({ ...valid, attachments: [], sender: 'x' });
    expect(error.fieldErrors).toEqual([
      { field: 'attachments', message: 'unknown field' },
      { field: 'sender', message: 'unknown field' },
    ]);
  });

  it('refuses wrong types', () => {
    expect(fieldsOf({ ...valid, html: 5 })).toEqual(['html']);
    expect(fieldsOf({ ...valid, cc: [1] })).toEqual(['cc.0']);
    expect(errorOf([valid]).statusCode).toBe(400);
    expect(errorOf('x').statusCode).toBe(400);
    expect(errorOf(null).statusCode).toBe(400);
  });
});

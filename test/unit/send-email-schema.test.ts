import { describe, expect, it } from 'vitest';
import { sendEmailSchema, toContent } from '../../functions/emails/email.js';
import { parseInput } from '../../functions/http/middleware.js';
import { ApiError } from '../../functions/shared/errors.js';

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
      tags: [],
      headers: {},
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
    const error = errorOf({ ...valid, sender: 'x', template: { id: 't' } });
    expect(error.fieldErrors).toEqual([
      { field: 'sender', message: 'unknown field' },
      { field: 'template', message: 'unknown field' },
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

describe('tags', () => {
  const tag = (name: string, value = 'v') => ({ name, value });

  it('keeps them as given, in order; letters, digits, _ and -, up to 256 characters each, up to 40', () => {
    const tags = [
      tag('category', 'welcome'),
      tag('User_ID-2', 'u-42_x'),
      tag('a'.repeat(256), 'b'.repeat(256)),
    ];
    expect(toContent(parseInput(sendEmailSchema, { ...valid, tags })).tags).toEqual(tags);
    const forty = Array.from({ length: 40 }, (_, i) => tag(`t${i}`));
    expect(toContent(parseInput(sendEmailSchema, { ...valid, tags: forty })).tags).toHaveLength(40);
  });

  it.each([
    [[tag('has space')], 'tags.0.name'],
    [[tag('ok', 'dot.ted')], 'tags.0.value'],
    [[tag('ok'), tag('é')], 'tags.1.name'],
    [[tag('a'.repeat(257))], 'tags.0.name'],
    [[tag('ok', '')], 'tags.0.value'],
    [[{ name: 'ok' }], 'tags.0.value'],
    [[{ name: 'ok', value: 'v', extra: 1 }], 'tags.0.extra'],
    [[tag('email_id')], 'tags.0.name'],
    [[tag('same'), tag('same')], 'tags.1.name'],
    [Array.from({ length: 41 }, (_, i) => tag(`t${i}`)), 'tags'],
    [{ name: 'x', value: 'y' }, 'tags'],
    ['category:welcome', 'tags'],
  ])('refuses %j, naming %s', (tags, field) => {
    expect(fieldsOf({ ...valid, tags })).toEqual([field]);
  });
});

describe('headers', () => {
  it('passes List-Unsubscribe, X-* and other custom headers as given', () => {
    const headers = {
      'List-Unsubscribe': '<https://acme.com/unsub?u=1>, <mailto:unsub@acme.com>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Entity-Ref-ID': '123',
      'In-Reply-To': '<abc@acme.com>',
    };
    expect(toContent(parseInput(sendEmailSchema, { ...valid, headers })).headers).toEqual(headers);
  });

  it.each([
    [{ 'X-Evil': 'a\r\nBcc: victim@example.com' }, 'headers.X-Evil', /line breaks/],
    [{ 'X-Evil': 'a\nb' }, 'headers.X-Evil', /line breaks/],
    [{ 'Bad Name': 'v' }, 'headers.Bad Name', /not a valid header name/],
    [{ 'Bad:Name': 'v' }, 'headers.Bad:Name', /not a valid header name/],
    [{ 'X-Ünicode': 'v' }, 'headers.X-Ünicode', /not a valid header name/],
    [{ From: 'a@b.c' }, 'headers.From', /set by the service/],
    [{ bcc: 'a@b.c' }, 'headers.bcc', /set by the service/],
    [{ 'Reply-To': 'a@b.c' }, 'headers.Reply-To', /set by the service/],
    [{ 'Message-ID': '<x@y>' }, 'headers.Message-ID', /set by the service/],
    [{ 'Content-Type': 'text/plain' }, 'headers.Content-Type', /set by the service/],
    [{ 'MIME-Version': '1.0' }, 'headers.MIME-Version', /set by the service/],
    [{ 'X-SES-CONFIGURATION-SET': 'other' }, 'headers.X-SES-CONFIGURATION-SET', /set by the service/],
    [{ 'X-Num': 1 }, 'headers.X-Num', /string value/],
    [{ 'X-Empty': '' }, 'headers.X-Empty', /1 to 870/],
    [{ 'X-Long': 'x'.repeat(871) }, 'headers.X-Long', /1 to 870/],
    [{ 'X-Accent': 'café' }, 'headers.X-Accent', /printable ASCII/],
  ])('refuses %j, naming the header', (headers, field, message) => {
    const error = errorOf({ ...valid, headers });
    expect(error.fieldErrors?.map((f) => f.field)).toEqual([field]);
    expect(error.fieldErrors?.[0]?.message).toMatch(message);
  });

  it('refuses more than 15 (SES takes 15), and a non-object', () => {
    const many = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-H${i}`, 'v']));
    expect(fieldsOf({ ...valid, headers: many })).toEqual(['headers']);
    expect(fieldsOf({ ...valid, headers: ['X-A: b'] })).toEqual(['headers']);
  });
});

import { describe, expect, it } from 'vitest';
import { headerFields, messageAsSent, rfc5322Date, tagsOfHeader } from '../../functions/emails/mime.js';

/**
 * An SMTP email's message as SES gets it (issue 42): the client's bytes, with only Bcc,
 * Resend-Idempotency-Key and X-SES-* fields taken out and a Date put first when it has none.
 */
const DKIM =
  'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme.test; s=s1;\r\n' +
  '\th=from:to:subject:list-unsubscribe; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;\r\n' +
  '\tb=dzdVyOfAKCdLXdJOc9G2q8LoXSlEniSbav+yuU4zGeeruD00lszZVoG4ZHRNiYzR\r\n';
const UNSUBSCRIBE =
  'List-Unsubscribe: <https://acme.test/u?t=abc>,\r\n <mailto:unsubscribe@acme.test?subject=u>\r\n';
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));
const text = (raw: Uint8Array) => Buffer.from(raw).toString('latin1');

const message = (extra: string, date = 'Date: Sat, 28 Nov 2026 10:00:00 +0000\r\n') =>
  bytes(
    `${DKIM}From: Acme <hello@acme.test>\r\nTo: a@example.test\r\n` +
      `Bcc: hidden@example.test,\r\n  other@example.test\r\n${date}${UNSUBSCRIBE}${extra}` +
      'Subject: Hi\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nBcc: not a header\r\nHello\r\n',
  );

describe('messageAsSent', () => {
  it('cuts out Bcc (folded lines too), Resend-Idempotency-Key and X-SES-* fields, and nothing else', () => {
    const raw = message(
      'Resend-Idempotency-Key: k-1\r\nX-SES-MESSAGE-TAGS: a=b\r\nX-SES-CONFIGURATION-SET: other\r\n',
    );
    const sent = text(messageAsSent(raw, new Date('2026-11-28T12:00:00Z')));
    expect(sent).toBe(
      `${DKIM}From: Acme <hello@acme.test>\r\nTo: a@example.test\r\n` +
        `Date: Sat, 28 Nov 2026 10:00:00 +0000\r\n${UNSUBSCRIBE}` +
        'Subject: Hi\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nBcc: not a header\r\nHello\r\n',
    );
    // DKIM-Signature and List-Unsubscribe pass through byte for byte, folding and all.
    expect(sent).toContain(DKIM);
    expect(sent).toContain(UNSUBSCRIBE);
  });

  it('puts a Date first only when the message has none; a message with nothing to cut is the same bytes', () => {
    const undated = message('', '');
    const sent = text(messageAsSent(undated, new Date('2026-11-28T12:00:00Z')));
    expect(sent.startsWith('Date: Sat, 28 Nov 2026 12:00:00 +0000\r\nDKIM-Signature: ')).toBe(true);
    const clean = bytes('From: a@acme.test\r\nDate: Sat, 28 Nov 2026 10:00:00 +0000\r\n\r\nHi\r\n');
    expect(messageAsSent(clean, new Date())).toBe(clean);
    expect(rfc5322Date(new Date('2026-01-02T03:04:05Z'))).toBe('Fri, 02 Jan 2026 03:04:05 +0000');
  });

  it('reads header fields where they lie, unfolded, up to the empty line', () => {
    const fields = headerFields(message(''));
    expect(fields.map((f) => f.name)).toEqual([
      'DKIM-Signature',
      'From',
      'To',
      'Bcc',
      'Date',
      'List-Unsubscribe',
      'Subject',
      'MIME-Version',
      'Content-Type',
    ]);
    expect(fields[3]?.value).toBe('hidden@example.test, other@example.test');
  });
});

describe('a header with a line that is no field', () => {
  it('reads on to the empty line, so a Bcc after it is still cut out and a Date after it still found', () => {
    const raw = bytes(
      'From: hello@acme.test\r\nTo: a@example.test\r\nX-Broken header line\r\n' +
        'Bcc: secret@example.test\r\nResend-Idempotency-Key: k-2\r\nDate: Sat, 28 Nov 2026 10:00:00 +0000\r\n' +
        'Subject: Hi\r\n\r\nHello\r\n',
    );
    expect(headerFields(raw).map((f) => f.name)).toEqual([
      'From',
      'To',
      'Bcc',
      'Resend-Idempotency-Key',
      'Date',
      'Subject',
    ]);
    const sent = text(messageAsSent(raw, new Date('2026-11-28T12:00:00Z')));
    expect(sent).not.toContain('secret@example.test');
    expect(sent).not.toContain('k-2');
    expect(sent.match(/^Date:/gm)).toHaveLength(1);
    expect(sent).toContain('X-Broken header line\r\n');
  });

  it('a continuation line after such a line joins no field', () => {
    const raw = bytes('From: hello@acme.test\r\nnot a field\r\n continued\r\nSubject: Hi\r\n\r\nHello\r\n');
    expect(headerFields(raw).map((f) => [f.name, f.value])).toEqual([
      ['From', 'hello@acme.test'],
      ['Subject', 'Hi'],
    ]);
  });
});

describe('the Date line added', () => {
  it('ends as the message’s own lines do (bare LF in a message written so)', () => {
    const sent = text(
      messageAsSent(bytes('From: a@acme.test\nSubject: Hi\n\nHello\n'), new Date('2026-11-28T12:00:00Z')),
    );
    expect(sent).toBe('Date: Sat, 28 Nov 2026 12:00:00 +0000\nFrom: a@acme.test\nSubject: Hi\n\nHello\n');
  });
});

describe('X-SES-MESSAGE-TAGS', () => {
  it('reads SES SMTP’s `name=value, name2=value2`', () => {
    expect(tagsOfHeader('campaign=spring, kind = welcome')).toEqual([
      { name: 'campaign', value: 'spring' },
      { name: 'kind', value: 'welcome' },
    ]);
    expect(tagsOfHeader(undefined)).toEqual([]);
    expect(tagsOfHeader('lonely')).toEqual([{ name: 'lonely', value: '' }]);
  });
});

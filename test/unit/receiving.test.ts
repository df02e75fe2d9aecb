import { describe, expect, it } from 'vitest';
import {
  authenticationOf,
  failedReceiptEvent,
  receiptsOf,
  scanVerdictOf,
} from '../../functions/receiving/events.js';
import { parseMessage } from '../../functions/receiving/parse.js';
import { receivedEvent } from '../../functions/receiving/receive.js';
import { multipartMessage, PDF, PNG, sesReceiptEvent, tooDeepMessage } from '../support/received-mail.js';

/** SES's receipt event in the service's terms, its verdicts, and the parse of a raw message. */

describe("SES's receipt event", () => {
  it("maps SES's documented example: the message id, when, received_for from receipt.recipients, the verdicts", () => {
    const [receipt, ...more] = receiptsOf(sesReceiptEvent());
    expect(more).toEqual([]);
    expect(receipt).toEqual({
      sesMessageId: 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
      envelopeFrom: 'prvs=144d0cba7=sender@example.com',
      receivedAt: '2019-08-05T21:30:02.028Z',
      recipients: ['recipient@example.com'],
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'gray' },
      spam: 'pass',
      virus: 'pass',
    });
  });

  it('takes the envelope recipients the rule matched, not the message headers', () => {
    const [receipt] = receiptsOf(
      sesReceiptEvent((e) => {
        const ses = e.Records[0]?.ses as unknown as { receipt: { recipients: string[] } };
        ses.receipt.recipients = ['a@receiving.example', 'b@receiving.example'];
      }),
    );
    expect(receipt?.recipients).toEqual(['a@receiving.example', 'b@receiving.example']);
  });

  it.each([
    ['PASS', 'pass'],
    ['FAIL', 'fail'],
    ['GRAY', 'gray'],
    ['PROCESSING_FAILED', 'processing_failed'],
    ['DISABLED', 'unknown'],
    ['SOMETHING_NEW', 'unknown'],
    [undefined, 'unknown'],
  ])("SES's %s is Resend's authentication %s", (status, expected) => {
    expect(authenticationOf(status)).toBe(expected);
  });

  it.each([
    ['PASS', 'pass'],
    ['FAIL', 'fail'],
    ['GRAY', 'gray'],
    ['PROCESSING_FAILED', 'processing_failed'],
    ['DISABLED', 'disabled'],
    [undefined, 'unknown'],
  ])('keeps a spam or virus verdict %s as %s', (status, expected) => {
    expect(scanVerdictOf(status)).toBe(expected);
  });

  it('shows what the local twin leaves out (no verdicts at all) as unknown', () => {
    const [receipt] = receiptsOf(
      sesReceiptEvent((e) => {
        const ses = e.Records[0]?.ses as unknown as { receipt: Record<string, unknown> };
        for (const key of ['spfVerdict', 'dkimVerdict', 'dmarcVerdict', 'spamVerdict', 'virusVerdict'])
          delete ses.receipt[key];
      }),
    );
    expect(receipt).toMatchObject({
      authentication: { spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' },
      spam: 'unknown',
      virus: 'unknown',
    });
  });

  it('refuses an event that is not a receipt event', () => {
    expect(() => receiptsOf({} as never)).toThrow('not an SES receipt event');
    expect(() => receiptsOf({ Records: [{ ses: { mail: {} } }] } as never)).toThrow('messageId');
  });

  it("reads SES's event back out of Lambda's failure record (onFailure: requestPayload)", () => {
    const event = sesReceiptEvent();
    const record = {
      version: '1.0',
      timestamp: '2026-11-28T08:00:00.000Z',
      requestContext: {
        requestId: 'e4b46cbf-b738-xmpl-8880-a18cdf61200e',
        functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:receive-email:$LATEST',
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      requestPayload: event,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: { errorMessage: 'boom' },
    };
    expect(failedReceiptEvent(JSON.stringify(record))).toEqual(event);
    expect(failedReceiptEvent('{"requestPayload":{}}')).toBeNull();
    expect(failedReceiptEvent('not json')).toBeNull();
  });
});

describe('parsing a received message (postal-mime)', () => {
  it('reads a multipart message with an inline image and an attachment: addresses, thread, bodies, headers, each attachment', async () => {
    const parsed = await parseMessage(multipartMessage());
    expect(parsed).toMatchObject({
      from: '"Doe, Jane" <jane@sender.example>',
      to: ['Inbox <inbox@receiving.example>'],
      cc: ['copy@sender.example'],
      bcc: [],
      reply_to: ['replies@sender.example'],
      subject: 'Café order',
      message_id: '<order-2@sender.example>',
      in_reply_to: '<order-1@receiving.example>',
      references: ['<order-0@sender.example>', '<order-1@receiving.example>'],
    });
    expect(parsed.parse_error).toBeUndefined();
    expect(parsed.bodies.text).toContain('Your order, with a logo.');
    expect(parsed.bodies.html).toContain('<img src="cid:logo@sender.example">');
    expect(parsed.bodies.headers).toMatchObject({
      'x-custom': 'one, two',
      'in-reply-to': '<order-1@receiving.example>',
    });
    const [logo, pdf, ...more] = parsed.attachments;
    expect(more).toEqual([]);
    expect(logo).toMatchObject({
      filename: 'logo.png',
      content_type: 'image/png',
      content_id: 'logo@sender.example',
      content_disposition: 'inline',
    });
    expect(Buffer.from(logo?.bytes ?? []).equals(PNG)).toBe(true);
    expect(pdf).toMatchObject({
      filename: 'order.pdf',
      content_type: 'application/pdf',
      content_id: null,
      content_disposition: 'attachment',
    });
    expect(Buffer.from(pdf?.bytes ?? []).equals(PDF)).toBe(true);
  });

  it('keeps a message postal-mime refuses with what could be read: its headers, and why', async () => {
    const parsed = await parseMessage(tooDeepMessage());
    expect(parsed.parse_error).toMatch(/nesting depth/i);
    expect(parsed).toMatchObject({
      from: 'Deep <deep@sender.example>',
      to: ['inbox@receiving.example'],
      subject: 'Nested',
      message_id: '<deep@sender.example>',
      attachments: [],
    });
    expect(parsed.bodies).toMatchObject({ html: null, text: null, headers: { subject: 'Nested' } });
  });

  it('reads a message with no headers of note and no body without failing', async () => {
    const parsed = await parseMessage(Buffer.from('\r\n'));
    expect(parsed).toMatchObject({ from: null, to: [], subject: '', message_id: null, attachments: [] });
  });
});

describe('email.received', () => {
  it("is Resend's payload: metadata only, received_for, attachments' nullable fields, the email's time", async () => {
    const event = receivedEvent({
      id: '019ac9a0-0000-7000-8000-000000000001',
      ses_message_id: 'ses-1',
      created_at: '2026-11-28T08:00:00.000Z',
      from: 'Jane <jane@sender.example>',
      to: ['inbox@receiving.example'],
      cc: [],
      bcc: [],
      reply_to: ['replies@sender.example'],
      received_for: ['inbox@receiving.example'],
      subject: 'Hi',
      message_id: '<m@sender.example>',
      in_reply_to: null,
      references: [],
      attachments: [
        {
          id: '019ac9a0-0000-7000-8000-000000000002',
          filename: null,
          content_type: 'application/octet-stream',
          content_id: null,
          content_disposition: null,
          size: 3,
        },
      ],
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
      spam: 'pass',
      virus: 'pass',
      size: 100,
      notified: false,
    });
    expect(event).toMatchObject({ type: 'email.received', created_at: '2026-11-28T08:00:00.000Z' });
    expect(event.data).toEqual({
      email_id: '019ac9a0-0000-7000-8000-000000000001',
      created_at: '2026-11-28T08:00:00.000Z',
      from: 'Jane <jane@sender.example>',
      to: ['inbox@receiving.example'],
      cc: [],
      bcc: [],
      received_for: ['inbox@receiving.example'],
      message_id: '<m@sender.example>',
      subject: 'Hi',
      attachments: [
        {
          id: '019ac9a0-0000-7000-8000-000000000002',
          filename: null,
          content_type: 'application/octet-stream',
          content_disposition: null,
          content_id: null,
        },
      ],
    });
  });
});

import { readFileSync } from 'node:fs';
import type { SesReceiptEvent } from '../../functions/receiving/events.js';

/** SES's documented example receipt event (Lambda action), cloned, with another message id when given. */
export function sesReceiptEvent(
  change: (event: SesReceiptEvent & { Records: { ses: Record<string, never> }[] }) => void = () => undefined,
): SesReceiptEvent {
  const event = JSON.parse(
    readFileSync(new URL('../fixtures/ses-receipt-event.json', import.meta.url), 'utf8'),
  ) as SesReceiptEvent;
  change(event as never);
  return event;
}

/** A 1×1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
export const PDF = Buffer.from('%PDF-1.4\n% a small document\n%%EOF\n');

/**
 * A multipart/mixed message as a mail client writes it: a multipart/related HTML body with an
 * inline image (by Content-ID) beside a text alternative, and a PDF attachment; a reply in a thread.
 */
export function multipartMessage(options: { messageId?: string; to?: string } = {}): Buffer {
  const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      'From: "Doe, Jane" <jane@sender.example>',
      `To: Inbox <${options.to ?? 'inbox@receiving.example'}>`,
      'Cc: copy@sender.example',
      'Reply-To: replies@sender.example',
      'Subject: =?UTF-8?Q?Caf=C3=A9_order?=',
      `Message-ID: ${options.messageId ?? '<order-2@sender.example>'}`,
      'In-Reply-To: <order-1@receiving.example>',
      'References: <order-0@sender.example>\r\n <order-1@receiving.example>',
      'Date: Sat, 28 Nov 2026 08:00:00 +0000',
      'MIME-Version: 1.0',
      'X-Custom: one',
      'X-Custom: two',
      'Content-Type: multipart/mixed; boundary="mixed"',
      '',
      '--mixed',
      'Content-Type: multipart/related; boundary="related"',
      '',
      '--related',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Your order, with a logo.',
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Your order</p><img src="cid:logo@sender.example">',
      '--alt--',
      '--related',
      'Content-Type: image/png',
      'Content-Transfer-Encoding: base64',
      'Content-ID: <logo@sender.example>',
      'Content-Disposition: inline; filename="logo.png"',
      '',
      b64(PNG),
      '--related--',
      '--mixed',
      'Content-Type: application/pdf; name="order.pdf"',
      'Content-Transfer-Encoding: base64',
      'Content-Disposition: attachment; filename="order.pdf"',
      '',
      b64(PDF),
      '--mixed--',
      '',
    ].join('\r\n'),
  );
}

/** A message postal-mime refuses: its MIME parts nested deeper than its limit (256). */
export function tooDeepMessage(): Buffer {
  const depth = 300;
  const lines = [
    'From: Deep <deep@sender.example>',
    'To: inbox@receiving.example',
    'Subject: Nested',
    'Message-ID: <deep@sender.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b0"',
    '',
  ];
  for (let i = 1; i <= depth; i++)
    lines.push(`--b${i - 1}`, `Content-Type: multipart/mixed; boundary="b${i}"`, '');
  lines.push(`--b${depth}`, 'Content-Type: text/plain', '', 'deep', `--b${depth}--`);
  for (let i = depth - 1; i >= 0; i--) lines.push(`--b${i}--`);
  return Buffer.from(lines.join('\r\n'));
}

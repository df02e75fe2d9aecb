import { describe, expect, it } from 'vitest';
import { Bounds, RECEIVED_LIMITS as L } from '../../functions/receiving/bounds.js';
import type { ReceivedEmail } from '../../functions/receiving/model.js';
import { receivedEvent } from '../../functions/receiving/receive.js';
import { deliveryFor } from '../../functions/webhooks/model.js';

/**
 * The limits of bounds.ts hold in the worst case, whatever the characters: an email whose every
 * field is full of what costs most (`"`, escaped twice in the delivery's JSON, or `€`, 3 bytes in
 * UTF-8; a control character, 6 bytes escaped, is made a space) fits an SQS message (256 KB) and
 * a DynamoDB item (400 KB) with room to spare.
 */
function fullest(char: string): ReceivedEmail {
  const b = new Bounds();
  const long = (n: number) => char.repeat(n + 10);
  const list = () => b.addresses(Array.from({ length: 1000 }, () => long(L.address)));
  const email: ReceivedEmail = {
    id: '019ac9d2-0000-7000-8000-000000000000',
    ses_message_id: 'a'.repeat(40),
    created_at: '2026-11-28T10:00:00.000Z',
    from: b.text(long(L.address), L.address),
    to: list(),
    cc: list(),
    bcc: list(),
    reply_to: list(),
    received_for: list(),
    subject: b.text(long(L.subject), L.subject),
    message_id: b.text(long(L.messageId), L.messageId),
    in_reply_to: b.text(long(L.messageId), L.messageId),
    references: b.references(Array.from({ length: 1000 }, () => long(L.reference))),
    attachments: b
      .attachments(
        Array.from({ length: 10_000 }, () => ({
          filename: long(10),
          content_type: long(10),
          content_id: long(10),
          content_disposition: 'attachment' as const,
        })),
      )
      .map((a, i) => ({
        ...a,
        id: `019ac9d2-0000-7000-8000-${String(i).padStart(12, '0')}`,
        size: 40_000_000,
      })),
    authentication: { spf: 'processing_failed', dkim: 'processing_failed', dmarc: 'processing_failed' },
    spam: 'processing_failed',
    virus: 'processing_failed',
    size: 40_000_000,
    parse_error: b.text(long(L.parseError), L.parseError),
    notified: false,
    truncated: true,
  };
  expect(b.truncated).toBe(true);
  return email;
}

describe('received emails bounded', () => {
  it.each(['"', '€', '\\', '\u0001', '😀'])(
    'fit an SQS message and a DynamoDB item when full of %j',
    (char) => {
      const email = fullest(char);
      const sqsMessage = JSON.stringify(deliveryFor('wh_0123456789', receivedEvent(email)));
      expect(Buffer.byteLength(sqsMessage)).toBeLessThan(200 * 1024);
      // The item's JSON is more than DynamoDB counts (names and UTF-8 bytes of values).
      const item = JSON.stringify({ pk: 'RECEIVED', sk: email.id, ...email, expires_at: 2_000_000_000 });
      expect(Buffer.byteLength(item)).toBeLessThan(300 * 1024);
    },
  );

  it('cuts no surrogate pair in two', () => {
    const b = new Bounds();
    expect(b.text('a😀', 2)).toBe('a');
    expect(b.truncated).toBe(true);
  });
});

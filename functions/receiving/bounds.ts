import type { ReceivedAttachment } from './model.js';

/**
 * What a received email's table item and its `email.received` event hold of a message, bounded: a
 * message of up to 40 MB (SES's limit) is chosen by its sender, and a hostile one (a 500 KB
 * subject, thousands of addresses in To, thousands of tiny attachments) would otherwise make an
 * item over DynamoDB's 400 KB, which no retry and no sweep could ever store, and an event over
 * SQS's 256 KB. What is cut is marked (`truncated`); the full headers stay in `parsed.json`, and
 * the attachments beyond those listed stay in the raw message.
 *
 * Lengths are in characters (UTF-16 code units), and the worst case is priced at 4 bytes each: 3
 * in UTF-8, or a `"` or `\` escaped twice (the event's body is JSON inside the delivery's JSON).
 * Control characters, which JSON escapes to 6 (7 twice) bytes and no decoded header needs, become
 * spaces. Then the worst case is:
 * - the event: subject 2,000 + from 320 + message id 998 + 4 lists (to, cc, bcc, received_for) ×
 *   4,000 + the attachments' names 16,000 = 35,318 characters, 141 KB at 4 bytes, plus 200
 *   attachments' ids and keys (about 150 bytes each escaped twice, 30 KB): about 175 KB, under
 *   SQS's 256 KB with room for the delivery's own fields;
 * - the item: the same at 3 bytes (106 KB), plus reply_to (12 KB), in_reply_to (3 KB), 50
 *   references of 320 (48 KB), parse_error (3 KB) and 200 attachments' ids, keys and sizes (about
 *   20 KB): under 200 KB, half of DynamoDB's 400 KB.
 * test/unit/receiving-bounds.test.ts builds that worst case: 153 KB of delivery message (full of
 * `"`), 187 KB of item as JSON (full of `€`; DynamoDB counts less than its JSON).
 */
export const RECEIVED_LIMITS = {
  subject: 2_000,
  /** An address as shown (`Name <address>`); RFC 5321 allows 254 for the address itself. */
  address: 320,
  /** Addresses kept in each of to, cc, bcc, reply_to and received_for… */
  addressesPerList: 50,
  /** …and characters in each of them, all its addresses together. */
  listChars: 4_000,
  /** RFC 5322's line limit: a Message-ID or In-Reply-To longer than a line is not one. */
  messageId: 998,
  references: 50,
  reference: 320,
  /** Attachments listed (and stored as objects of their own); the rest stay in the raw message. */
  attachments: 200,
  /** Each of an attachment's filename, content_type and content_id (a file name's usual limit)… */
  attachmentField: 255,
  /** …and all listed attachments' filenames, content types and content ids together. */
  attachmentsChars: 16_000,
  parseError: 1_000,
} as const;

/** Cuts values to their limits, remembering whether anything was cut. */
export class Bounds {
  truncated = false;

  text(value: string, limit: number): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
    const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ');
    if (clean.length <= limit) return clean;
    this.truncated = true;
    // Not between the two halves of a surrogate pair (JSON would escape a lone half to 6 bytes).
    const end = /[\ud800-\udbff]/.test(clean.charAt(limit - 1)) ? limit - 1 : limit;
    return clean.slice(0, end);
  }

  nullable(value: string | null, limit: number): string | null {
    return value === null ? null : this.text(value, limit);
  }

  /** Addresses in order, each cut to its limit, as many as the list's limits take. */
  addresses(values: string[]): string[] {
    const kept: string[] = [];
    let chars = 0;
    for (const value of values) {
      const address = this.text(value, RECEIVED_LIMITS.address);
      if (
        kept.length >= RECEIVED_LIMITS.addressesPerList ||
        chars + address.length > RECEIVED_LIMITS.listChars
      ) {
        this.truncated = true;
        break;
      }
      kept.push(address);
      chars += address.length;
    }
    return kept;
  }

  references(values: string[]): string[] {
    if (values.length > RECEIVED_LIMITS.references) this.truncated = true;
    return values.slice(0, RECEIVED_LIMITS.references).map((r) => this.text(r, RECEIVED_LIMITS.reference));
  }

  /** How many of these attachments are listed: in order, as many as the limits take (their fields cut). */
  attachments<T extends Pick<ReceivedAttachment, 'filename' | 'content_type' | 'content_id'>>(
    values: T[],
  ): T[] {
    const kept: T[] = [];
    let chars = 0;
    for (const value of values) {
      const field = RECEIVED_LIMITS.attachmentField;
      const cut = {
        ...value,
        filename: this.nullable(value.filename, field),
        content_type: this.text(value.content_type, field),
        content_id: this.nullable(value.content_id, field),
      };
      const size = (cut.filename?.length ?? 0) + cut.content_type.length + (cut.content_id?.length ?? 0);
      if (kept.length >= RECEIVED_LIMITS.attachments || chars + size > RECEIVED_LIMITS.attachmentsChars) {
        this.truncated = true;
        break;
      }
      kept.push(cut);
      chars += size;
    }
    return kept;
  }
}

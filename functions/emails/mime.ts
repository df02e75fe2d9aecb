/**
 * An SMTP email's message as bytes (issue 42): its header fields read where they lie, and the
 * message as handed to SES, which is the client's own with a few fields taken out. No parsing of
 * its parts here (accept-mime.ts does that with postal-mime, for the API): what is sent is never
 * re-encoded, so what the client signed (DKIM-Signature) or folded stays as it was, byte for byte.
 */

/** One header field of the message: its name, its value unfolded, and the bytes it spans. */
export interface HeaderField {
  name: string;
  value: string;
  /** Offset of its first byte. */
  start: number;
  /** Offset after its last line's line end (its continuation lines included). */
  end: number;
}

/**
 * The message's top-level header fields, in order, read as bytes (latin1: one character a byte,
 * so offsets are byte offsets and nothing throws): up to the first empty line, or the whole
 * message when there is none.
 */
export function headerFields(raw: Uint8Array): HeaderField[] {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  const fields: HeaderField[] = [];
  // The field a continuation line belongs to: none after a line that is no field.
  let last: HeaderField | undefined;
  let at = 0;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    const lineEnd = newline < 0 ? text.length : newline + 1;
    const line = text.slice(at, lineEnd).replace(/\r?\n$/, '');
    if (line === '') break; // the empty line that ends the header
    if (/^[ \t]/.test(line)) {
      if (last) {
        last.value += ` ${line.trim()}`;
        last.end = lineEnd;
      }
    } else {
      const colon = line.indexOf(':');
      // A line that is no field (no colon) is passed over, not taken as the header's end: the
      // header runs to the empty line, as postal-mime and SES read it, so a Bcc or one of our
      // fields after such a line is still found (and cut out).
      last =
        colon <= 0
          ? undefined
          : {
              name: line.slice(0, colon).trim(),
              value: line.slice(colon + 1).trim(),
              start: at,
              end: lineEnd,
            };
      if (last) fields.push(last);
    }
    at = lineEnd;
  }
  return fields;
}

/** The first field of this name (case-insensitive), unfolded; undefined when the message has none. */
export const headerValue = (fields: readonly HeaderField[], name: string): string | undefined =>
  fields.find((field) => field.name.toLowerCase() === name.toLowerCase())?.value;

/**
 * Fields taken out of the message before SES gets it: `Bcc` (its recipients are in the envelope,
 * and a header would show them to everyone), `Resend-Idempotency-Key` (ours, read at acceptance),
 * and every `X-SES-*` field (`X-SES-MESSAGE-TAGS` became the email's tags; the others would name a
 * configuration set or another account's identity, which the service chooses itself).
 */
export const isRemovedField = (name: string): boolean => {
  const lower = name.toLowerCase();
  return lower === 'bcc' || lower === 'resend-idempotency-key' || lower.startsWith('x-ses-');
};

/** Bytes a message is left below SES's limit for the `Date` field messageAsSent may add. */
export const DATE_FIELD_ROOM = 64;

/** A date as RFC 5322 writes it: `Sat, 28 Nov 2026 21:30:18 +0000`. */
export const rfc5322Date = (at: Date): string => at.toUTCString().replace(/GMT$/, '+0000');

/**
 * The message as SES is handed it: the client's bytes with the removed fields (isRemovedField)
 * cut out, and a `Date` field put first when it has none (RFC 5322 requires one). Every other byte,
 * folding and line ends included, is the client's.
 */
export function messageAsSent(raw: Uint8Array, now: Date): Uint8Array {
  const fields = headerFields(raw);
  const removed = fields.filter((field) => isRemovedField(field.name));
  const dated = fields.some((field) => field.name.toLowerCase() === 'date');
  if (!removed.length && dated) return raw;
  // The Date line ends as the message's first line does (CRLF, or a bare LF in a message written so).
  const firstNewline = raw.indexOf(10);
  const lineEnd =
    firstNewline > 0 && raw[firstNewline - 1] === 13 ? '\r\n' : firstNewline >= 0 ? '\n' : '\r\n';
  const parts: Uint8Array[] = dated ? [] : [Buffer.from(`Date: ${rfc5322Date(now)}${lineEnd}`, 'latin1')];
  let at = 0;
  for (const field of removed) {
    parts.push(raw.subarray(at, field.start));
    at = field.end;
  }
  parts.push(raw.subarray(at));
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * SES SMTP's own tag header, `X-SES-MESSAGE-TAGS: name=value, name2=value2`, as `{name, value}`
 * entries (checked afterwards as a send's `tags` are). An entry without `=` is kept with an empty
 * value, so the check names it rather than it vanishing.
 */
export function tagsOfHeader(value: string | undefined): { name: string; value: string }[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const equals = entry.indexOf('=');
      return equals < 0
        ? { name: entry, value: '' }
        : { name: entry.slice(0, equals).trim(), value: entry.slice(equals + 1).trim() };
    });
}

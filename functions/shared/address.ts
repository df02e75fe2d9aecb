/**
 * Email address parsing for `from`, `to`, `cc`, `bcc` and `reply_to`.
 * Accepts `addr@domain`, `Name <addr@domain>` and `"Name, Inc." <addr@domain>`.
 * Control characters (CR/LF above all) are refused everywhere: they are how header injection starts.
 */
import { domainToASCII } from 'node:url';

export interface ParsedAddress {
  readonly name?: string;
  readonly email: string;
}

// Local part: the dot-atom of RFC 5322 (what SES and real mailboxes accept in practice);
// domain: dot-separated labels of letters, digits and hyphens with an alphabetic TLD, or an A-label.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
const TLD = /^([A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export function isValidEmail(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0) return false;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local)) return false;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  return TLD.test(labels[labels.length - 1] ?? '');
}

/** An internationalised domain is turned into its A-label (punycode) form, which SES and DNS use. */
function toAsciiDomain(email: string): string {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any non-ASCII character
  if (at < 0 || !/[^\u0000-\u007f]/.test(domain)) return email;
  const ascii = domainToASCII(domain);
  return ascii ? `${email.slice(0, at)}@${ascii}` : email;
}

/** Returns the parsed address, or a reason it is not one. */
export function parseAddress(input: string): ParsedAddress | { error: string } {
  if (CONTROL.test(input)) return { error: 'must not contain control characters or line breaks' };
  const trimmed = input.trim();
  const angle = /^(.*?)\s*<([^<>]+)>$/.exec(trimmed);
  if (angle) {
    let name = (angle[1] ?? '').trim();
    const email = toAsciiDomain((angle[2] ?? '').trim());
    if (name.startsWith('"') && name.endsWith('"') && name.length >= 2) {
      const inner = name.slice(1, -1);
      if (/(^|[^\\])"/.test(inner)) return { error: 'has a display name with unbalanced quotes' };
      name = inner.replace(/\\(.)/g, '$1');
    } else if (/[<>"]/.test(name)) {
      return { error: 'has a display name with unbalanced quotes or brackets' };
    }
    if (!isValidEmail(email)) return { error: `"${email}" is not a valid email address` };
    return name ? { name, email } : { email };
  }
  const email = toAsciiDomain(trimmed);
  if (!isValidEmail(email)) return { error: `"${trimmed}" is not a valid email address` };
  return { email };
}

// RFC 5322 "specials": a display name containing one of them must be quoted.
const SPECIALS = /[()<>[\]:;@\\,."]/;

/** `Name <addr>`, quoting (and escaping) the name only when RFC 5322 requires it. */
export const formatAddress = (a: ParsedAddress): string => {
  if (!a.name) return a.email;
  const name = SPECIALS.test(a.name) ? `"${a.name.replace(/(["\\])/g, '\\$1')}"` : a.name;
  return `${name} <${a.email}>`;
};

/** The domain of an address, lower-cased (what a verified sending domain is matched against). */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

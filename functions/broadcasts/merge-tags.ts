import type { Contact, ContactProperty, PropertyValue } from '../contacts/contact.js';

/**
 * A broadcast's merge tags (Resend's): `{{{contact.first_name|there}}}`, `{{{contact.<property
 * key>|fallback}}}` and `{{{contact.email}}}`; the older `{{{FIRST_NAME|there}}}`, `{{{LAST_NAME}}}`
 * and `{{{EMAIL}}}`; and `{{{RESEND_UNSUBSCRIBE_URL}}}`, the recipient's own unsubscribe link. A
 * value is the contact's, else the tag's fallback (after `|`), else the property's `fallback_value`,
 * else empty. In HTML a value is escaped (a contact's name is data, never markup: `Tom & Jerry`
 * reads the same, `<script>` is shown, not run); in the subject and text it is as stored. What is
 * not a merge tag (a `{{{NAME}}}` unknown here) is left as written, and listed by `unknownMergeTags`
 * so the API refuses it before anything is sent.
 */

/** A `{{{…}}}` with its name and optional `|fallback` (no braces inside, so the match stays linear). */
const TAG = /\{\{\{\s*([^{}|\s]+)\s*(?:\|([^{}]*))?\}\}\}/g;

export const UNSUBSCRIBE_TAG = 'RESEND_UNSUBSCRIBE_URL';
const LEGACY: Readonly<Record<string, 'first_name' | 'last_name' | 'email'>> = {
  FIRST_NAME: 'first_name',
  LAST_NAME: 'last_name',
  EMAIL: 'email',
};
const BUILT_IN = new Set(['first_name', 'last_name', 'email']);

export interface BroadcastParts {
  subject: string;
  html: string | null;
  text: string | null;
}

/** What one contact's email says. */
export interface Rendered {
  subject: string;
  html: string | null;
  text: string | null;
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );

/** The field or property a tag names (`contact.x` or a legacy name), or undefined when it is not a contact's. */
const fieldOf = (name: string): string | undefined =>
  name.startsWith('contact.') ? name.slice('contact.'.length) : LEGACY[name];

/** Every tag name used in the parts, once each, in order. */
export function mergeTagsIn(parts: BroadcastParts): string[] {
  const names = new Set<string>();
  for (const text of [parts.subject, parts.html, parts.text])
    if (text) for (const match of text.matchAll(TAG)) names.add(match[1] as string);
  return [...names];
}

/**
 * The tags that name nothing: neither a contact field, a defined property (by key), nor the
 * unsubscribe link. (`{{{contact.unsubscribed}}}` is not a value to show: it is unknown too.)
 */
export function unknownMergeTags(parts: BroadcastParts, properties: readonly ContactProperty[]): string[] {
  const keys = new Set(properties.map((p) => p.key));
  return mergeTagsIn(parts).filter((name) => {
    if (name === UNSUBSCRIBE_TAG) return false;
    const field = fieldOf(name);
    return field === undefined || !(BUILT_IN.has(field) || keys.has(field));
  });
}

/** Renders the parts for one contact, with its own unsubscribe link. */
export function renderForContact(
  parts: BroadcastParts,
  contact: Pick<Contact, 'email' | 'first_name' | 'last_name' | 'props'>,
  properties: readonly ContactProperty[],
  unsubscribeUrl: string,
): Rendered {
  const byKey = new Map(properties.map((p) => [p.key, p]));
  const lookUp = (name: string, fallback: string | undefined): string | undefined => {
    if (name === UNSUBSCRIBE_TAG) return unsubscribeUrl;
    const field = fieldOf(name);
    if (field === undefined) return undefined;
    let value: PropertyValue | null | undefined;
    if (field === 'first_name') value = contact.first_name;
    else if (field === 'last_name') value = contact.last_name;
    else if (field === 'email') value = contact.email;
    else {
      const property = byKey.get(field);
      if (!property) return undefined;
      value = contact.props[property.id];
      if ((value === undefined || value === '') && fallback === undefined) value = property.fallback_value;
    }
    if (value === undefined || value === null || value === '') return fallback?.trim() ?? '';
    return String(value);
  };
  const fill = (text: string, inHtml: boolean) =>
    text.replace(TAG, (whole, name: string, fallback: string | undefined) => {
      const value = lookUp(name, fallback);
      if (value === undefined) return whole;
      return inHtml && name !== UNSUBSCRIBE_TAG ? escapeHtml(value) : value;
    });
  return {
    subject: fill(parts.subject, false).replace(/[\r\n]+/g, ' '),
    html: parts.html === null ? null : fill(parts.html, true),
    text: parts.text === null ? null : fill(parts.text, false),
  };
}

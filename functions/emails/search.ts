import { domainOf } from '../shared/address.js';
import type { EmailContent } from './content.js';
import type { ListEmailsQuery } from './list-query.js';
import { addressKey, recipientsOf } from './recipients.js';

/**
 * Search: what an email is found by, as `GET /v1/emails`'s filters of our own name it. Each term is
 * a list of its own in the search index (adapters/dynamodb/email-keys.ts), written at acceptance.
 */
export type SearchKind = 'to' | 'from' | 'tag';

/** What an email is found by: its sender's domain, its distinct recipients, its tags (`name:value`). */
export interface SearchTerms {
  readonly senderDomain: string;
  readonly recipients: readonly string[];
  readonly tags: readonly string[];
}

/** An email's search terms, as its filters compare them: addresses and the domain lower-cased, tags as given. */
export const searchTermsOf = (
  content: Pick<EmailContent, 'from' | 'to' | 'cc' | 'bcc' | 'tags'>,
): SearchTerms => ({
  senderDomain: domainOf(addressKey(content.from)),
  recipients: [...new Set(recipientsOf(content).map(({ email }) => email))],
  tags: [...new Set(content.tags.map(({ name, value }) => `${name}:${value}`))],
});

/**
 * The index a query is served by, the most selective first: a recipient (one customer's emails), a
 * tag, a sender domain; then a status, then time alone. The other filters narrow within it.
 */
export function primaryTerm(query: ListEmailsQuery): { kind: SearchKind; value: string } | undefined {
  if (query.recipient !== undefined) return { kind: 'to', value: query.recipient };
  if (query.tag !== undefined) return { kind: 'tag', value: query.tag };
  if (query.sender_domain !== undefined) return { kind: 'from', value: query.sender_domain };
  return undefined;
}

/** Whether an email's summary and status satisfy a query's filters (those the summary and status can say). */
export function matchesListed(
  query: ListEmailsQuery,
  email: { status: string; from: string; to: string[]; cc: string[]; bcc: string[] },
): boolean {
  if (query.status !== undefined && email.status !== query.status) return false;
  if (query.sender_domain !== undefined && domainOf(addressKey(email.from)) !== query.sender_domain)
    return false;
  if (
    query.recipient !== undefined &&
    ![...email.to, ...email.cc, ...email.bcc].some((address) => addressKey(address) === query.recipient)
  )
    return false;
  return true;
}

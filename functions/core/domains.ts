/**
 * Sending domains: what a domain record is, how a domain name is checked and normalised, and the
 * statuses a domain moves through. Nothing here knows SES: the provider adapter (adapters/ses/
 * identities.ts on AWS, the local stand-in on a laptop) reports the records to publish and their
 * verification state in these terms.
 */
import { domainToASCII } from 'node:url';
import * as z from 'zod/mini';
import { pageQuerySchema, pageShape } from './list.js';

/**
 * - `pending`: the records have not been seen in DNS yet (SES keeps looking for up to 72 hours).
 * - `verified`: SES found the DKIM records; the domain can send.
 * - `temporary_failure`: SES could not check DNS for a while (it retries by itself).
 * - `failed`: SES gave up (records missing for 72 hours, or removed later).
 */
export const DOMAIN_STATUSES = ['pending', 'verified', 'temporary_failure', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/**
 * A record's status. Every value is one of Resend's record statuses, so a client generated from
 * Resend's document accepts it.
 */
export type RecordStatus = DomainStatus;

/**
 * A record SES checks, in Resend's terms: `record` is `DKIM` (signing) or `SPF` (the MAIL FROM
 * subdomain's MX and TXT, as Resend names them). The suggested DMARC record is not one of these:
 * it is shown in a field of our own (`dmarc_record`), never in `records`.
 */
export interface DnsRecord {
  record: 'DKIM' | 'SPF';
  type: 'CNAME' | 'MX' | 'TXT';
  /** Fully qualified name of the record. */
  name: string;
  value: string;
  priority?: number;
  ttl: 'Auto';
  status: RecordStatus;
}

/** Domains stored before DMARC left `records` still hold its entry there; it is dropped on read. */
export const checkedRecords = (records: readonly { record: string }[]): DnsRecord[] =>
  records.filter((r): r is DnsRecord => r.record === 'DKIM' || r.record === 'SPF');

/** What the provider says about a domain: its records and how far verification got. */
export interface DomainIdentity {
  status: DomainStatus;
  /** Whether the provider will send from this domain now (SES's VerifiedForSendingStatus). */
  sendable: boolean;
  records: DnsRecord[];
}

export interface Domain extends DomainIdentity {
  id: string;
  /** Lower-case A-label (punycode) form, without a trailing dot. */
  domain: string;
  created_at: string;
  /** When the status was last read from the provider. */
  checked_at: string;
}

export const DOMAIN_ID_PREFIX = 'dom';

export const MAX_DOMAIN_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;

const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: any non-ASCII character
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * Checks a domain name and returns it in the form SES and DNS use: lower case, A-labels for an
 * internationalised name, no trailing dot. Returns a reason when it is not a domain name.
 */
export function normalizeDomainName(input: string): { domain: string } | { error: string } {
  if (input.length === 0) return { error: 'is empty' };
  if (/\s/.test(input)) return { error: 'must not contain spaces or line breaks' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input))
    return { error: 'must be a domain name without a scheme: remove "http://" or "https://"' };
  if (input.includes('@')) return { error: 'must be a domain name, not an email address' };
  if (/[/?#]/.test(input)) return { error: 'must be a domain name without a path, query or fragment' };
  if (input.includes(':') || input.startsWith('['))
    return { error: 'must be a domain name, not an IP address or host:port' };
  // One trailing dot is the fully qualified spelling of the same name.
  let name = input.endsWith('.') ? input.slice(0, -1) : input;
  if (IPV4.test(name)) return { error: 'must be a domain name, not an IP address' };
  if (NON_ASCII.test(name)) {
    const ascii = domainToASCII(name);
    if (!ascii) return { error: 'is not a valid internationalised domain name' };
    name = ascii;
  }
  name = name.toLowerCase();
  if (name.length > MAX_DOMAIN_LENGTH)
    return { error: `is ${name.length} characters long; a domain name has at most ${MAX_DOMAIN_LENGTH}` };
  const labels = name.split('.');
  if (labels.length < 2) return { error: 'needs at least two labels, like "acme.com"' };
  for (const label of labels) {
    if (label.length === 0) return { error: 'has an empty label (two dots in a row, or a leading dot)' };
    if (label.length > MAX_LABEL_LENGTH)
      return {
        error: `has a label of ${label.length} characters ("${label.slice(0, 20)}…"); a label has at most ${MAX_LABEL_LENGTH}`,
      };
    if (!LABEL.test(label))
      return {
        error: `has an invalid label "${label}": use letters, digits and hyphens, not at the start or end`,
      };
  }
  const tld = labels[labels.length - 1] ?? '';
  if (/^\d+$/.test(tld)) return { error: 'must end in a top-level domain, not a number' };
  return { domain: name };
}

const domainName = z.pipe(
  z.string({ error: 'must be a string with a domain name, like "acme.com"' }),
  z.transform((value: string, ctx) => {
    const result = normalizeDomainName(value);
    if ('error' in result) {
      ctx.issues.push({ code: 'custom', message: `"${value}" ${result.error}`, input: value });
      return z.NEVER;
    }
    return result.domain;
  }),
);

/** `POST /v1/domains`: `{domain}`; Resend's clients send `{name}`, accepted as an alias. */
export const createDomainSchema = z.pipe(
  z.strictObject({ domain: z.optional(domainName), name: z.optional(domainName) }),
  z.transform((body, ctx) => {
    if (body.domain && body.name && body.domain !== body.name) {
      ctx.issues.push({
        code: 'custom',
        message: 'domain and name are the same field; send one of them',
        input: body,
        path: ['name'],
      });
      return z.NEVER;
    }
    const domain = body.domain ?? body.name;
    if (!domain) {
      ctx.issues.push({ code: 'custom', message: 'is required', input: body, path: ['domain'] });
      return z.NEVER;
    }
    return { domain };
  }),
);

export const listDomainsQuerySchema = pageQuerySchema(pageShape(DOMAIN_ID_PREFIX));

/**
 * The suggested DMARC policy: report-only, so publishing it can never block mail. SES does not
 * check it, so its status says so (`not_checked`) instead of pretending; a field of our own.
 */
export const dmarcRecord = (domain: string) => ({
  type: 'TXT' as const,
  name: `_dmarc.${domain}`,
  value: 'v=DMARC1; p=none;',
  ttl: 'Auto' as const,
  status: 'not_checked' as const,
});

/** The subdomain SES uses as MAIL FROM (bounce address), so SPF aligns with the sender's domain. */
export const mailFromDomain = (domain: string) => `send.${domain}`;

/**
 * A domain's status in Resend's terms (its document has no `temporary_failure` for a domain): SES
 * could not check DNS for a while and keeps looking by itself, so the domain is still `pending`.
 * The records keep `temporary_failure` (a record status Resend has), so nothing is hidden.
 */
export const resendDomainStatus = (status: DomainStatus): 'pending' | 'verified' | 'failed' =>
  status === 'temporary_failure' ? 'pending' : status;

/**
 * What a domain can do, in Resend's shape: it sends; receiving is not built (Resend's document
 * allows only `enabled` and `disabled`).
 */
export const DOMAIN_CAPABILITIES = { sending: 'enabled', receiving: 'disabled' } as const;

/**
 * The API's view of a domain: Resend's domain object (`name`, `region`, tracking and capabilities;
 * `tracking_subdomain` is left out, as there is no tracking), `domain` as our spec names it, and
 * what goes beyond Resend in fields of our own: the MAIL FROM subdomain and the suggested DMARC
 * record. `region` is where the SES identity is (the stack's region).
 */
export const toDomainBody = (domain: Domain, region: string) => ({
  object: 'domain' as const,
  id: domain.id,
  name: domain.domain,
  domain: domain.domain,
  status: resendDomainStatus(domain.status),
  created_at: domain.created_at,
  region,
  open_tracking: false,
  click_tracking: false,
  capabilities: DOMAIN_CAPABILITIES,
  records: checkedRecords(domain.records),
  mail_from_domain: mailFromDomain(domain.domain),
  dmarc_record: dmarcRecord(domain.domain),
});

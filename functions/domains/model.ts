/**
 * Sending domains: what a domain record is, how a domain name is checked and normalised, and the
 * statuses a domain moves through. Nothing here knows SES: the provider adapter (adapters/ses/
 * identities.ts on AWS, the local stand-in on a laptop) reports the records to publish and their
 * verification state in these terms.
 */
import { domainToASCII } from 'node:url';
import * as z from 'zod/mini';
import { DOMAIN_ID_PREFIX } from '../shared/ids.js';
import { pageQuerySchema, pageShape } from '../shared/list.js';
import { TLS_MODES } from './tls-modes.js';

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
 * A record to publish, in Resend's terms: `DKIM` (signing) and `SPF` (the MAIL FROM subdomain's MX
 * and TXT, as Resend names them), which SES checks; `Tracking` (the tracking subdomain's CNAME),
 * `TrackingCAA` (leave Amazon free to issue its certificate) and `Receiving` (the domain's MX to
 * SES's inbound SMTP host, with receiving enabled), which the service looks up in DNS itself.
 * The suggested DMARC record is not one of these: it is shown in a field of our own
 * (`dmarc_record`), never in `records`.
 */
export interface DnsRecord {
  record: 'DKIM' | 'SPF' | 'Tracking' | 'TrackingCAA' | 'Receiving';
  type: 'CNAME' | 'MX' | 'TXT' | 'CAA';
  /** Fully qualified name of the record. */
  name: string;
  value: string;
  priority?: number;
  ttl: 'Auto';
  status: RecordStatus;
}

const RECORD_KINDS = new Set(['DKIM', 'SPF', 'Tracking', 'TrackingCAA', 'Receiving']);

/** Domains stored before DMARC left `records` still hold its entry there; it is dropped on read. */
export const checkedRecords = (records: readonly { record: string }[]): DnsRecord[] =>
  records.filter((r): r is DnsRecord => RECORD_KINDS.has(r.record));

/** The records SES checks (the identity's), without the tracking ones the service checks itself. */
export const identityRecordsOf = (records: readonly DnsRecord[]): DnsRecord[] =>
  records.filter((r) => r.record === 'DKIM' || r.record === 'SPF');

/** What the provider says about a domain: its records and how far verification got. */
export interface DomainIdentity {
  status: DomainStatus;
  /** Whether the provider will send from this domain now (SES's VerifiedForSendingStatus). */
  sendable: boolean;
  records: DnsRecord[];
}

export type TlsMode = (typeof TLS_MODES)[number];

/**
 * What the domain's owner chose (Resend's fields). Tracking is off by default, as on Resend: a
 * tracked email carries a pixel and rewritten links, which sensitive mail should not.
 */
export interface DomainSettings {
  open_tracking: boolean;
  click_tracking: boolean;
  /** `enforced`: SES delivers only over TLS, or not at all (SES's TlsPolicy REQUIRE). */
  tls: TlsMode;
  /** The tracking host's labels under the domain (`links` for links.acme.com); once set, never removed. */
  tracking_subdomain?: string;
  /** The MAIL FROM (Return-Path) subdomain's label(s), fixed at creation. @default send */
  custom_return_path?: string;
  /**
   * Resend's `capabilities.receiving`: mail to any address at the domain is received (SES's receipt
   * rules hold the domain; domains/receiving.ts). Off by default, as on Resend.
   */
  receiving: boolean;
}

/**
 * The SES configuration set of the domain's own, once it needs one: SES takes a TLS policy and a
 * custom redirect domain per configuration set only, not per send. What is recorded here is what
 * SES has; sends from the domain use the set once it is recorded.
 */
export interface DomainConfigurationSet {
  name: string;
  tls: TlsMode;
  /** The tracking host SES writes links and the pixel with (absent: SES's own). */
  redirect_domain?: string;
}

export interface Domain extends DomainIdentity, DomainSettings {
  id: string;
  /** Lower-case A-label (punycode) form, without a trailing dot. */
  domain: string;
  created_at: string;
  /** When the status was last read from the provider. */
  checked_at: string;
  configuration_set?: DomainConfigurationSet;
  /**
   * Why the tracking host, published in DNS, is not in use yet: the front does not serve it over
   * HTTPS, or SES has not verified the domain (absent: in use, or its CNAME not seen yet).
   */
  tracking_problem?: string;
  /**
   * Why mail to a receiving domain does not reach the service now: the account's active receipt
   * rule set does not hold this service's rules, or the domain's most preferred MX is another host.
   */
  receiving_problem?: string;
  /** Bumped by every write, so concurrent writers cannot overwrite each other (absent on old items: 0). */
  version?: number;
}

export const DEFAULT_SETTINGS: DomainSettings = {
  open_tracking: false,
  click_tracking: false,
  tls: 'opportunistic',
  receiving: false,
};

/** What a send from a domain needs to know: SES's options for it. */
export interface SenderOptions {
  openTracking: boolean;
  clickTracking: boolean;
  /** The domain's own configuration set; absent: the stack's. */
  configurationSet?: string;
}

export { DOMAIN_ID_PREFIX };

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

/** One or more DNS labels under the domain (`links`, `t.mail`); a full name under it is cut to them. */
const subdomainLabels = (what: string) =>
  z.pipe(
    z.string({ error: `must be a string with a subdomain's labels, like "${what}"` }),
    z.transform((value: string, ctx) => {
      const labels = value.toLowerCase().replace(/\.$/, '').split('.');
      const bad = labels.find((label) => !LABEL.test(label) || label.length > MAX_LABEL_LENGTH);
      if (value.length === 0 || bad !== undefined) {
        ctx.issues.push({
          code: 'custom',
          message: `"${value}" is not a subdomain: use labels of letters, digits and hyphens, like "${what}"`,
          input: value,
        });
        return z.NEVER;
      }
      return labels.join('.');
    }),
  );

const tlsMode = z.enum(TLS_MODES, {
  error: 'must be "opportunistic" or "enforced"',
});

/**
 * Resend's `capabilities`: receiving can be turned on and off (where the stack's Region receives:
 * the use case checks that); sending stays enabled (Resend also refuses a domain with neither).
 */
const capabilities = z.pipe(
  z.strictObject({
    sending: z.optional(z.enum(['enabled', 'disabled'], { error: 'must be "enabled" or "disabled"' })),
    receiving: z.optional(z.enum(['enabled', 'disabled'], { error: 'must be "enabled" or "disabled"' })),
  }),
  z.transform((value, ctx) => {
    if (value.sending === 'disabled')
      ctx.issues.push({
        code: 'custom',
        message:
          'every domain here sends: sending stays "enabled" (delete the domain to stop sending from it)',
        input: value,
        path: ['sending'],
      });
    return value;
  }),
);

const settingsShape = {
  open_tracking: z.optional(z.boolean({ error: 'must be true or false' })),
  click_tracking: z.optional(z.boolean({ error: 'must be true or false' })),
  tls: z.optional(tlsMode),
  tracking_subdomain: z.optional(subdomainLabels('links')),
  capabilities: z.optional(capabilities),
};

/** `PATCH /v1/domains/{id}`, Resend's body: every field optional; what is left out stays as it is. */
export const updateDomainSchema = z.strictObject(settingsShape);
export type DomainUpdate = z.infer<typeof updateDomainSchema>;

/** Labels under the domain: `links.acme.com` under acme.com is `links`. */
const under = (labels: string, domain: string) =>
  labels.endsWith(`.${domain}`) ? labels.slice(0, -domain.length - 1) : labels;

/** The settings a change leaves (the tracking subdomain can be changed, never removed). */
export const applyUpdate = <S extends DomainSettings>(
  current: S,
  update: DomainUpdate,
  domain: string,
): S => ({
  ...current,
  ...(update.open_tracking === undefined ? {} : { open_tracking: update.open_tracking }),
  ...(update.click_tracking === undefined ? {} : { click_tracking: update.click_tracking }),
  ...(update.tls === undefined ? {} : { tls: update.tls }),
  ...(update.tracking_subdomain === undefined
    ? {}
    : { tracking_subdomain: under(update.tracking_subdomain, domain) }),
  ...(update.capabilities?.receiving === undefined
    ? {}
    : { receiving: update.capabilities.receiving === 'enabled' }),
});

/**
 * `POST /v1/domains`: `{domain}`, or Resend's `{name}` with its other fields. `region` must be the
 * stack's (a domain's SES identity is where the stack is); the handler checks it.
 */
export const createDomainSchema = z
  .pipe(
    z.strictObject({
      domain: z.optional(domainName),
      name: z.optional(domainName),
      region: z.optional(z.string({ error: 'must be a string' })),
      custom_return_path: z.optional(subdomainLabels('send')),
      ...settingsShape,
    }),
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
      const { name: _name, domain: _domain, region, ...update } = body;
      const settings: DomainSettings = {
        ...applyUpdate(DEFAULT_SETTINGS, update, domain),
        ...(body.custom_return_path ? { custom_return_path: under(body.custom_return_path, domain) } : {}),
      };
      return { domain, region, settings };
    }),
  )
  .register(z.globalRegistry, {
    // What the transform checks, for the OpenAPI document: `domain` or Resend's `name`.
    anyOf: [{ required: ['domain'] }, { required: ['name'] }],
  });

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
export const mailFromDomain = (domain: string, returnPath = 'send') => `${returnPath}.${domain}`;

/** The tracking host of a domain with a tracking subdomain. */
export const trackingHost = (domain: Pick<Domain, 'domain' | 'tracking_subdomain'>) =>
  domain.tracking_subdomain ? `${domain.tracking_subdomain}.${domain.domain}` : undefined;

/** The CAA value that lets Amazon's CA issue the tracking host's certificate (for HTTPS links). */
export const TRACKING_CAA_VALUE = '0 issue "amazon.com"';

/**
 * The tracking records a domain with a tracking subdomain publishes, in Resend's shape:
 * - `Tracking`: the host's CNAME to where SES's tracking is served: the HTTPS front (the stack's
 *   `trackingHttpsTarget`, a CloudFront distribution in front of SES's tracking host: see
 *   docs/tracking.md) or SES's own regional tracking host (plain http links).
 * - `TrackingCAA`: on the domain itself, needed only when the domain already publishes CAA
 *   records (they would keep Amazon from issuing the certificate the HTTPS front needs). A CAA
 *   record cannot sit beside the CNAME, so it goes on the parent.
 */
export function trackingRecords(
  domain: Pick<Domain, 'domain' | 'tracking_subdomain'>,
  target: string,
  status: { cname: RecordStatus; caa: RecordStatus },
): DnsRecord[] {
  const host = trackingHost(domain);
  if (!host) return [];
  return [
    { record: 'Tracking', type: 'CNAME', name: host, value: target, ttl: 'Auto', status: status.cname },
    {
      record: 'TrackingCAA',
      type: 'CAA',
      name: domain.domain,
      value: TRACKING_CAA_VALUE,
      ttl: 'Auto',
      status: status.caa,
    },
  ];
}

/**
 * The configuration set a domain needs: its own once it enforces TLS or has a tracking host ready.
 * A host is ready when its `Tracking` record is `verified`, which withTrackingRecords (sync.ts)
 * gives only once its CNAME is in DNS, the front serves it over HTTPS and SES has verified the
 * domain: pointing SES's links at a host that does not serve them would break every link. Until a
 * new host is ready, the host in use stays (the one before a change, which works; else SES's own).
 * The host in use leaves only when its CNAME is gone from DNS (a DNS hiccup keeps it). Once a
 * domain has a set it keeps it (TLS back to opportunistic is an update of the set), so sends never
 * switch sets while one is being created or deleted. It is named `name` (the stack's prefix and the
 * domain's id): a set recorded under another name (an older prefix, before it held a digest of the
 * whole stack name) is replaced by one so named, with the same options, and the old one is retired
 * once the new one is stored (sync.ts, retireMovedSet).
 */
export function neededConfigurationSet(domain: Domain, name: string): DomainConfigurationSet | undefined {
  const host = trackingHost(domain);
  const inUse = domain.configuration_set?.redirect_domain;
  const cname = domain.records.find((r) => r.record === 'Tracking');
  const status = cname !== undefined && cname.name === host ? cname.status : undefined;
  const redirect =
    host && (status === 'verified' || (status === 'temporary_failure' && inUse === host))
      ? host
      : inUse === host
        ? undefined
        : inUse;
  if (!domain.configuration_set && domain.tls !== 'enforced' && !redirect) return undefined;
  return {
    name,
    tls: domain.tls,
    ...(redirect ? { redirect_domain: redirect } : {}),
  };
}

/** Whether two records of a domain's set say the same (stored maps come back in any key order). */
export const sameConfigurationSet = (a?: DomainConfigurationSet, b?: DomainConfigurationSet) =>
  a?.name === b?.name && a?.tls === b?.tls && a?.redirect_domain === b?.redirect_domain;

/** Whether two lists of records say the same, whatever the order of each record's keys. */
export const sameRecords = (a: readonly DnsRecord[], b: readonly DnsRecord[]) => {
  const line = (r: DnsRecord) =>
    [r.record, r.type, r.name, r.value, r.priority ?? '', r.ttl, r.status].join('\u0000');
  return a.length === b.length && a.every((r, i) => line(r) === line(b[i] as DnsRecord));
};

/**
 * A domain's status in Resend's terms (its document has no `temporary_failure` for a domain): SES
 * could not check DNS for a while and keeps looking by itself, so the domain is still `pending`.
 * The records keep `temporary_failure` (a record status Resend has), so nothing is hidden.
 */
export const resendDomainStatus = (status: DomainStatus): 'pending' | 'verified' | 'failed' =>
  status === 'temporary_failure' ? 'pending' : status;

/** What a domain can do, in Resend's shape: it sends, and receives once receiving is enabled. */
export const domainCapabilities = (domain: Pick<Domain, 'receiving'>) =>
  ({ sending: 'enabled', receiving: domain.receiving ? 'enabled' : 'disabled' }) as const;

/**
 * Ours: where the tracking host stands, beside its `Tracking` record: the record's status
 * (`verified` only once the host is in use), why it is not in use yet, and the host tracked links
 * are written with now (`null`: SES's own), which stays the previous host until a new one serves.
 */
const trackingHostBody = (domain: Domain) => {
  const host = trackingHost(domain);
  const cname = domain.records.find((r) => r.record === 'Tracking' && r.name === host);
  if (!host || !cname) return {};
  return {
    tracking_host: {
      name: host,
      status: cname.status,
      ...(domain.tracking_problem ? { problem: domain.tracking_problem } : {}),
      in_use: domain.configuration_set?.redirect_domain ?? null,
    },
  };
};

/**
 * The API's view of a domain: Resend's domain object (`name`, `region`, tracking, TLS and
 * capabilities; `tracking_subdomain` only once set, as Resend's schema has no null), `domain` as
 * our spec names it, and what goes beyond Resend in fields of our own: the MAIL FROM subdomain, the
 * suggested DMARC record, where the tracking host stands, and why mail to a receiving domain does
 * not reach the service (`receiving_problem`). `region` is where the SES identity is (the stack's).
 */
export const toDomainBody = (domain: Domain, region: string) => ({
  object: 'domain' as const,
  id: domain.id,
  name: domain.domain,
  domain: domain.domain,
  status: resendDomainStatus(domain.status),
  created_at: domain.created_at,
  region,
  open_tracking: domain.open_tracking,
  click_tracking: domain.click_tracking,
  tls: domain.tls,
  ...(domain.tracking_subdomain ? { tracking_subdomain: domain.tracking_subdomain } : {}),
  capabilities: domainCapabilities(domain),
  records: checkedRecords(domain.records),
  ...trackingHostBody(domain),
  ...(domain.receiving && domain.receiving_problem ? { receiving_problem: domain.receiving_problem } : {}),
  mail_from_domain: mailFromDomain(domain.domain, domain.custom_return_path),
  dmarc_record: dmarcRecord(domain.domain),
});

import { ApiError, conflict, notFound, validationError } from '../shared/errors.js';
import { isId, newId } from '../shared/ids.js';
import { AGAIN, optimistically } from '../shared/optimistic.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import { domainEvent } from './events.js';
import {
  applyUpdate,
  DEFAULT_SETTINGS,
  DOMAIN_ID_PREFIX,
  type Domain,
  type DomainIdentity,
  type DomainSettings,
  type DomainUpdate,
  identityRecordsOf,
  mailFromDomain,
  neededConfigurationSet,
  type RecordStatus,
  type SenderOptions,
  sameConfigurationSet,
  sameRecords,
  trackingHost,
  trackingRecords,
} from './model.js';
import {
  type ConfigurationSets,
  type DnsLookup,
  type DomainRepository,
  IdentityError,
  type SendingIdentities,
} from './ports.js';

export interface DomainDeps {
  domains: DomainRepository;
  identities: SendingIdentities;
  clock: Clock;
  log?: Log;
  counters?: Counters;
  /** Where domain.created, domain.updated and domain.deleted go (absent: none are raised). */
  events?: EventPublisher;
  /** The provider's region, as domain events name it. */
  region?: string;
  /**
   * Per-domain sending settings: the provider's configuration sets, the DNS the tracking records
   * are looked up in, where a tracking CNAME points, and how a domain's own set is named. Absent:
   * a domain can only keep the defaults (tracking off, opportunistic TLS, no tracking subdomain).
   */
  sending?: {
    configurationSets: ConfigurationSets;
    dns: DnsLookup;
    /** The tracking CNAME's value: the HTTPS front (absent: no tracking subdomains). */
    trackingTarget?: string;
    configurationSetName: (domainId: string) => string;
  };
}

/** Raises a domain event; a failure to publish is logged and counted, never fails the change. */
const raise = (
  deps: DomainDeps,
  type: 'domain.created' | 'domain.updated' | 'domain.deleted',
  domain: Domain,
) =>
  publishQuietly(deps, type, () => [
    domainEvent(type, deps.clock.now().toISOString(), domain, deps.region ?? 'us-east-1'),
  ]);

/**
 * How long a claim on a name protects a create in progress. Longer than one create request can
 * run (the function's timeout), so only a request that died loses its claim to a retry.
 */
export const CLAIM_LEASE_MS = 15_000;

/** A verified domain is re-read from the provider at most this often by the scheduled check. */
export const VERIFIED_RECHECK_MS = 60 * 60 * 1000;

/** Tracking records still pending in DNS are looked up again by the scheduled check this often. */
export const TRACKING_RECHECK_MS = 5 * 60 * 1000;

/** Most domains the scheduled check reads from the provider in one run (SES throttles identity reads). */
export const MAX_CHECKS_PER_RUN = 50;

/** The provider's refusal in the API's error shape; nothing was created when this is thrown. */
function identityFailure(domain: string, error: IdentityError): ApiError {
  switch (error.reason) {
    case 'exists':
      return conflict(
        `${domain} is already an SES identity in this account that this service did not create. ` +
          'Delete that identity in SES (or use another domain), then add it here.',
      );
    case 'limit':
      return validationError(`SES refused to add ${domain}: ${error.message}`);
    case 'invalid':
      return validationError(`SES refused ${domain}: ${error.message}`);
    case 'throttled':
      return new ApiError(
        429,
        'rate_limit_exceeded',
        'SES is throttling identity requests; nothing was created. Try again in a second.',
        undefined,
        { 'retry-after': '1' },
      );
    default:
      return new ApiError(
        500,
        'internal_server_error',
        `SES could not add ${domain} right now; nothing was created. Try again.`,
      );
  }
}

/**
 * Adds a sending domain: claim the name (one domain per name), create the provider identity, then
 * store the domain. A provider refusal gives the claim back, so nothing is left behind; if the store
 * fails after the provider succeeded, a retry adopts the identity this service created.
 */
export async function createDomain(
  deps: DomainDeps,
  name: string,
  settings: DomainSettings = DEFAULT_SETTINGS,
): Promise<Domain> {
  if (!sameSettings(settings, DEFAULT_SETTINGS)) assertSettingsPossible(deps, DEFAULT_SETTINGS, settings);
  const id = newId(DOMAIN_ID_PREFIX);
  const now = deps.clock.now();
  const claim = await deps.domains.claimName(name, id, now.getTime(), CLAIM_LEASE_MS);
  if (!claim.claimed) {
    if (claim.state === 'active') throw conflict(`Domain ${name} already exists (id ${claim.id}).`);
    throw conflict(
      `Domain ${name} is being added by another request (id ${claim.id}); try again in a few seconds.`,
    );
  }
  let identity: DomainIdentity;
  try {
    identity = await deps.identities.create(name, mailFromDomain(name, settings.custom_return_path));
  } catch (error) {
    await deps.domains.releaseName(name, id).catch(() => undefined);
    if (error instanceof IdentityError) throw identityFailure(name, error);
    throw error;
  }
  let domain: Domain = {
    id,
    domain: name,
    created_at: now.toISOString(),
    checked_at: now.toISOString(),
    ...settings,
    ...identity,
  };
  domain = await withTrackingRecords(deps, domain);
  try {
    // The set it needs (TLS enforced) before anything is stored: a refusal leaves nothing behind
    // but the identity, which a retry adopts (and a set half made, retired at once).
    domain = await withConfigurationSet(deps, domain);
  } catch (error) {
    await retireSet(deps, id, 0);
    await deps.domains.releaseName(name, id).catch(() => undefined);
    if (error instanceof IdentityError) throw identityFailure(name, error);
    throw error;
  }
  try {
    await deps.domains.save(domain, 'new');
  } catch (error) {
    // The identity stays with the provider, tagged as ours: the retry adopts it. Its set is for
    // this id, which the retry does not take: retired at once.
    if (domain.configuration_set) await retireSet(deps, id, 0);
    await deps.domains.delete(domain).catch(() => undefined);
    throw error;
  }
  await raise(deps, 'domain.created', domain);
  return domain;
}

async function find(deps: Pick<DomainDeps, 'domains'>, id: string): Promise<Domain> {
  const domain = isId(DOMAIN_ID_PREFIX, id) ? await deps.domains.get(id) : null;
  if (!domain) throw notFound(`Domain ${JSON.stringify(id)} not found.`);
  return domain;
}

const sameState = (a: Domain, b: Domain) =>
  a.status === b.status &&
  a.sendable === b.sendable &&
  sameRecords(a.records, b.records) &&
  sameConfigurationSet(a.configuration_set, b.configuration_set);

const SETTING_KEYS = ['open_tracking', 'click_tracking', 'tls', 'tracking_subdomain'] as const;
const sameSettings = (a: DomainSettings, b: DomainSettings) => SETTING_KEYS.every((k) => a[k] === b[k]);

/** Amazon's CAA issuer names: any of them lets ACM issue the tracking host's certificate. */
const AMAZON_CAS = new Set(['amazon.com', 'amazontrust.com', 'awstrust.com', 'amazonaws.com']);

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * Looks the tracking records up in DNS: the CNAME is verified once it points at the target; the
 * CAA record once no CAA record above the tracking host keeps Amazon from issuing (the closest
 * name with CAA records decides, as for a CA). A DNS failure is `temporary_failure`.
 */
async function trackingStatus(
  dns: DnsLookup,
  domain: Pick<Domain, 'domain' | 'tracking_subdomain'>,
  target: string,
): Promise<{ cname: RecordStatus; caa: RecordStatus }> {
  const host = trackingHost(domain) ?? domain.domain;
  const labels = host.split('.');
  // The names above the host, up to the domain, closest first: looked up side by side.
  const above = labels.slice(1).map((_, i) => labels.slice(i + 1).join('.'));
  const names = above.slice(0, above.length - domain.domain.split('.').length + 1);
  const lookups = Promise.all([
    dns.cname(host).then(
      (targets): RecordStatus => (targets.some((t) => bare(t) === bare(target)) ? 'verified' : 'pending'),
      (): RecordStatus => 'temporary_failure',
    ),
    Promise.all(names.map((name) => dns.caaIssuers(name))).then(
      (found): RecordStatus => {
        const closest = found.find((issuers) => issuers.length);
        return !closest || closest.some((issuer) => AMAZON_CAS.has(bare(issuer))) ? 'verified' : 'pending';
      },
      (): RecordStatus => 'temporary_failure',
    ),
  ]);
  // However slow DNS is, a request waits for it this long at most.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<[RecordStatus, RecordStatus]>((resolve) => {
    timer = setTimeout(() => resolve(['temporary_failure', 'temporary_failure']), DNS_WAIT_MS);
  });
  const [cname, caa] = await Promise.race([lookups, late]).finally(() => clearTimeout(timer));
  return { cname, caa };
}

/** The longest a request waits for the tracking records' DNS lookups. */
export const DNS_WAIT_MS = 2_500;

/**
 * The domain with its tracking records looked up in DNS (none without a tracking subdomain, or on
 * a deployment without the HTTPS front). Never throws: DNS that cannot answer is `temporary_failure`.
 */
async function withTrackingRecords(deps: DomainDeps, domain: Domain): Promise<Domain> {
  const target = deps.sending?.trackingTarget;
  const tracking =
    domain.tracking_subdomain && target && deps.sending
      ? trackingRecords(domain, target, await trackingStatus(deps.sending.dns, domain, target))
      : [];
  return { ...domain, records: [...identityRecordsOf(domain.records), ...tracking] };
}

/**
 * The domain with its configuration set brought to what its settings and records need: put to SES
 * first, then recorded (what is recorded is what SES has). With `force`, put even when the record
 * says SES has it already (after a put that was not stored). Throws the provider's IdentityError.
 */
async function withConfigurationSet(deps: DomainDeps, domain: Domain, force = false): Promise<Domain> {
  const { sending } = deps;
  if (!sending) return domain;
  const needed = neededConfigurationSet(domain, sending.configurationSetName(domain.id));
  if (!needed || (!force && sameConfigurationSet(needed, domain.configuration_set))) return domain;
  await sending.configurationSets.put(needed);
  return { ...domain, configuration_set: needed };
}

/**
 * After a put SES took but the store did not (a lost race, a put that failed half way), brings SES
 * back to what the store records, so the two cannot stay apart. Best effort: the scheduled check
 * puts every domain's set again once an hour.
 */
async function restoreConfigurationSet(deps: DomainDeps, id: string): Promise<void> {
  try {
    const stored = await deps.domains.get(id);
    if (stored?.configuration_set) await deps.sending?.configurationSets.put(stored.configuration_set);
  } catch (error) {
    deps.log?.error("could not bring the domain's configuration set back to what is stored", {
      domain_id: id,
      error,
    });
  }
}

/**
 * Reads the domain's state from the provider (and its tracking records from DNS, bringing its
 * configuration set along) and stores it when it changed (or always, with `touch`, so
 * `checked_at` says when it was last looked at). `converge` puts its set again even if nothing
 * changed (the hourly check: whatever drifted, or a new delivery time after a deploy). An identity
 * deleted behind our back makes the domain `failed`. If the provider cannot be read, the stored
 * state is returned as is; null when the domain was deleted or changed meanwhile (nothing stored
 * over it).
 */
export async function refreshDomain(
  deps: DomainDeps,
  domain: Domain,
  touch = false,
  converge = false,
): Promise<Domain | null> {
  let identity: DomainIdentity | null;
  try {
    identity = await deps.identities.get(
      domain.domain,
      mailFromDomain(domain.domain, domain.custom_return_path),
    );
  } catch (error) {
    deps.log?.warn('could not read the identity; returning the stored status', {
      domain: domain.domain,
      error,
    });
    return domain;
  }
  const current: DomainIdentity = identity ?? {
    status: 'failed',
    sendable: false,
    records: identityRecordsOf(domain.records).map((r) => ({ ...r, status: 'failed' })),
  };
  let refreshed = await withTrackingRecords(deps, {
    ...domain,
    ...current,
    checked_at: deps.clock.now().toISOString(),
  });
  const before = refreshed;
  let putFailed = false;
  try {
    refreshed = await withConfigurationSet(deps, refreshed, converge && Boolean(domain.configuration_set));
  } catch (error) {
    // The set stays recorded as it was (the records are kept); the next look tries again.
    deps.log?.warn("could not bring the domain's configuration set up to date", {
      domain_id: domain.id,
      error,
    });
    putFailed = true;
  }
  const put = putFailed || refreshed !== before;
  if (!touch && sameState(domain, refreshed)) return domain;
  // Deleted meanwhile (it stays deleted), or changed by another writer: theirs stands.
  if (!(await deps.domains.save(refreshed, 'existing'))) {
    if (put) await restoreConfigurationSet(deps, domain.id);
    return null;
  }
  if (putFailed) await restoreConfigurationSet(deps, domain.id);
  if (!sameState(domain, refreshed)) await raise(deps, 'domain.updated', refreshed);
  return { ...refreshed, version: (domain.version ?? 0) + 1 };
}

/**
 * `PATCH /v1/domains/{id}`: changes the domain's settings. What SES must hold (TLS enforced, the
 * tracking host) is put in its configuration set before the change is stored; a refusal answers
 * an error and SES is brought back to what is stored. Sends read a domain's settings once a minute
 * per instance, so a change reaches every send within a minute.
 */
export async function updateDomain(deps: DomainDeps, id: string, update: DomainUpdate): Promise<Domain> {
  // Whether SES was given a set this request did not store: it must end as what is stored.
  let dirty = false;
  return optimistically(
    `Domain ${id}`,
    async () => {
      const domain = await find(deps, id);
      const settings = applyUpdate(domain, update, domain.domain);
      if (sameSettings(domain, settings)) {
        if (dirty) await restoreConfigurationSet(deps, id);
        // What sends read, written again: a request whose change was stored but not its name item
        // (it failed between the two) is repaired by its retry.
        await deps.domains.syncName(domain);
        return domain;
      }
      assertSettingsPossible(deps, domain, settings);
      let changed: Domain;
      try {
        changed = await withConfigurationSet(
          deps,
          await withTrackingRecords(deps, { ...domain, ...settings }),
          dirty,
        );
      } catch (error) {
        await restoreConfigurationSet(deps, id);
        if (error instanceof IdentityError) throw settingsFailure(domain.domain, error);
        throw error;
      }
      if (await deps.domains.save(changed, 'existing')) {
        await raise(deps, 'domain.updated', changed);
        return { ...changed, version: (domain.version ?? 0) + 1 };
      }
      // Deleted (find answers 404 next) or changed by another writer: apply the change to theirs.
      dirty = dirty || changed.configuration_set !== domain.configuration_set;
      return AGAIN;
    },
    async () => {
      if (dirty) await restoreConfigurationSet(deps, id);
    },
  );
}

/** Settings this deployment cannot give (a change to them): a 400 that says what to set up, and where. */
function assertSettingsPossible(deps: DomainDeps, current: DomainSettings, settings: DomainSettings) {
  if (!deps.sending) throw validationError('This service is not set up for per-domain sending settings.');
  if (settings.tracking_subdomain === undefined || settings.tracking_subdomain === current.tracking_subdomain)
    return;
  const refuse = (message: string) => {
    throw validationError(message, [{ field: 'tracking_subdomain', message }]);
  };
  if (!deps.sending.trackingTarget)
    refuse(
      'tracking_subdomain needs the HTTPS front for tracking hosts, which this deployment does not have: SES would write https links to a host that serves no HTTPS. Deploy it and set trackingHttpsTarget (docs/tracking.md); open and click tracking work without a tracking subdomain.',
    );
  if (settings.tracking_subdomain === (settings.custom_return_path ?? 'send'))
    refuse(
      `"${settings.tracking_subdomain}" is the domain's MAIL FROM subdomain, whose MX and TXT records a CNAME cannot sit beside: choose another, like "links".`,
    );
}

/** How long a deleted domain's configuration set is kept: SES reports opens, clicks and late bounces through it. */
export const RETIRED_SET_KEEP_MS = 30 * 24 * 3600 * 1000;

/** Most retired sets the scheduled check deletes in one run. */
export const MAX_RETIRED_SETS_PER_RUN = 10;

/** Marks a domain's set (by its name: made or not) for deletion by the scheduled check after `keepMs`. */
async function retireSet(deps: DomainDeps, id: string, keepMs: number): Promise<void> {
  if (!deps.sending) return;
  const name = deps.sending.configurationSetName(id);
  await deps.domains
    .retireConfigurationSet(name, deps.clock.now().getTime() + keepMs)
    .catch((error) => deps.log?.error('could not retire a configuration set', { name, error }));
}

/** The provider's refusal of a configuration set, in the API's error shape: nothing was changed. */
function settingsFailure(domain: string, error: IdentityError): ApiError {
  if (error.reason === 'throttled' || error.reason === 'unavailable') {
    const failure = identityFailure(domain, error);
    return new ApiError(
      failure.statusCode,
      failure.errorName,
      `SES could not take ${domain}'s settings right now; nothing was changed. Try again.`,
      undefined,
      failure.headers,
    );
  }
  return validationError(`SES refused ${domain}'s settings: ${error.message}`);
}

/**
 * `GET /v1/domains/{id}` and `POST /v1/domains/{id}/verify`: the domain with its status read
 * fresh, and stored (with when it was looked at) each time: what the send path reads is written
 * again, so one whose write failed after the domain's (a throttled UpdateItem) is repaired by the
 * next read, not an hour later.
 */
export async function getDomain(deps: DomainDeps, id: string): Promise<Domain> {
  // Changed meanwhile: the newer one (or 404, deleted).
  return (await refreshDomain(deps, await find(deps, id), true)) ?? find(deps, id);
}

/** Removes the provider identity first, so a failure leaves the domain listed and the delete can be retried. */
export async function deleteDomain(deps: DomainDeps, id: string): Promise<Domain> {
  const domain = await find(deps, id);
  try {
    await deps.identities.delete(domain.domain);
  } catch (error) {
    if (error instanceof IdentityError) throw identityFailure(domain.domain, error);
    throw error;
  }
  // Not deleted now: SES publishes its emails' later events (delays, bounces, complaints, opens,
  // clicks) through it, and a deleted set's are lost. By its name, recorded or not (a set put
  // just before a failed store is not left behind); the scheduled check deletes it in 30 days.
  if (deps.sending)
    await deps.domains.retireConfigurationSet(
      deps.sending.configurationSetName(domain.id),
      deps.clock.now().getTime() + RETIRED_SET_KEEP_MS,
    );
  await deps.domains.delete(domain);
  await raise(deps, 'domain.deleted', domain);
  return domain;
}

/** Still waiting for SES to see DNS. */
const waiting = (status: string) => status === 'pending' || status === 'temporary_failure';

/**
 * The scheduled re-check: domains with records still waiting for DNS (pending, temporary_failure)
 * every run, verified ones once an hour (DNS records can be removed later). Failed ones are left
 * alone: SES stops looking after 72 hours. At most MAX_CHECKS_PER_RUN a run, the least recently
 * checked first, so however many are waiting, each is looked at in turn.
 */
export async function checkDomains(deps: DomainDeps): Promise<{ checked: number; changed: number }> {
  const now = deps.clock.now().getTime();
  const due: Domain[] = [];
  for await (const domain of deps.domains.all()) {
    const since = now - Date.parse(domain.checked_at);
    const waitingFor = (kinds: readonly string[]) =>
      domain.records.some((r) => kinds.includes(r.record) && waiting(r.status));
    if (
      waiting(domain.status) ||
      // Verified by DKIM while the MAIL FROM records are still being looked for.
      (domain.status === 'verified' && waitingFor(['DKIM', 'SPF'])) ||
      // Tracking records nobody may ever publish: looked for less often (a read of the domain
      // looks at once).
      (waitingFor(['Tracking', 'TrackingCAA']) && since >= TRACKING_RECHECK_MS) ||
      (domain.status === 'verified' && since >= VERIFIED_RECHECK_MS)
    )
      due.push(domain);
  }
  due.sort((a, b) => Date.parse(a.checked_at) - Date.parse(b.checked_at));
  let changed = 0;
  const batch = due.slice(0, MAX_CHECKS_PER_RUN);
  for (const domain of batch) {
    try {
      // The hourly look at a verified domain also puts its set again, whatever drifted.
      const hourly = now - Date.parse(domain.checked_at) >= VERIFIED_RECHECK_MS;
      // Changed by another writer meanwhile (null): its next run looks again.
      const refreshed = await refreshDomain(deps, domain, true, hourly);
      if (refreshed && refreshed.status !== domain.status) changed++;
    } catch (error) {
      deps.log?.error('domain check failed', { domain_id: domain.id, error });
    }
  }
  await deleteRetiredSets(deps, now);
  return { checked: batch.length, changed };
}

/** Deletes the configuration sets of deleted domains whose time has come (a few a run). */
async function deleteRetiredSets(deps: DomainDeps, now: number): Promise<void> {
  if (!deps.sending) return;
  const due = (await deps.domains.retiredConfigurationSets(now)).slice(0, MAX_RETIRED_SETS_PER_RUN);
  for (const name of due) {
    try {
      await deps.sending.configurationSets.delete(name);
      await deps.domains.forgetRetiredConfigurationSet(name);
    } catch (error) {
      deps.log?.error('could not delete a retired configuration set', { name, error });
    }
  }
}

/**
 * The send path's check that the sender's domain is verified. A verified answer is kept for
 * `ttlMs` in the function's memory, so the common case costs no AWS call; an unverified one is
 * never cached, so a domain that just became verified is usable at once.
 */
export function verifiedSenderDomains(
  domains: Pick<DomainRepository, 'senderState'>,
  clock: Clock,
  ttlMs = 60_000,
): (domain: string) => Promise<void> {
  const verifiedUntil = new Map<string, number>();
  return async (domain) => {
    const now = clock.now().getTime();
    if ((verifiedUntil.get(domain) ?? 0) > now) return;
    const state = await domains.senderState(domain);
    if (state?.sendable) {
      if (verifiedUntil.size >= 1000) verifiedUntil.clear();
      verifiedUntil.set(domain, now + ttlMs);
      return;
    }
    verifiedUntil.delete(domain);
    const message = state
      ? `The domain ${domain} is not verified (status: ${state.status}). Publish its DNS records (GET /v1/domains/{id} lists them) and send once it is verified.`
      : `The domain ${domain} is not verified: it is not a domain of this service. Add it with POST /v1/domains and publish its DNS records.`;
    throw validationError(message, [{ field: 'from', message }]);
  };
}

/**
 * The send consumer's view of a sender's domain: whether SES tracks its opens and clicks, and
 * the configuration set it sends with. Kept for `ttlMs` in the function's memory (a change of
 * settings reaches sends within it); a domain that is not there (deleted: SES refuses its sends
 * anyway) sends with the defaults.
 */
export function senderOptions(
  domains: Pick<DomainRepository, 'senderState'>,
  clock: Clock,
  ttlMs = 60_000,
): (domain: string) => Promise<SenderOptions> {
  const cache = new Map<string, { until: number; options: SenderOptions }>();
  return async (domain) => {
    const now = clock.now().getTime();
    const hit = cache.get(domain);
    if (hit && hit.until > now) return hit.options;
    const state = await domains.senderState(domain);
    const options: SenderOptions = state
      ? {
          openTracking: state.openTracking,
          clickTracking: state.clickTracking,
          ...(state.configurationSet ? { configurationSet: state.configurationSet } : {}),
        }
      : { openTracking: false, clickTracking: false };
    if (cache.size >= 1000) cache.clear();
    cache.set(domain, { until: now + ttlMs, options });
    return options;
  };
}

import { type DomainDeps, raise } from './deps.js';
import {
  type Domain,
  type DomainIdentity,
  identityRecordsOf,
  mailFromDomain,
  neededConfigurationSet,
  type RecordStatus,
  sameConfigurationSet,
  sameRecords,
  trackingHost,
  trackingRecords,
} from './model.js';
import type { DnsLookup, TrackingFront } from './ports.js';
import { receivingState, withReceiving } from './receiving.js';

/**
 * A domain kept in line with SES and DNS: its records' statuses read, its tracking records looked
 * up, its own configuration set put or given back to what is stored, and retired when it goes.
 */

export const sameState = (a: Domain, b: Domain) =>
  a.status === b.status &&
  a.sendable === b.sendable &&
  sameRecords(a.records, b.records) &&
  sameConfigurationSet(a.configuration_set, b.configuration_set);

/**
 * A domain's set as it was named before (a set moved to its current name, the older prefix's): a
 * move alone changes nothing its users see, so it raises no `domain.updated`.
 */
const renamedBack = (after: Domain, before: Domain) =>
  after.configuration_set && before.configuration_set
    ? { ...after.configuration_set, name: before.configuration_set.name }
    : after.configuration_set;

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
 * Why a tracking host whose CNAME is in DNS may not go into the domain's set yet; undefined when
 * it may (or is in use already: not looked at again). SES takes a custom redirect domain only
 * under a verified identity ("InvalidTrackingOptions: the tracking domain you specified is not
 * verified in Amazon SES"; a verified domain covers its subdomains), and a host SES writes links
 * with must be served over HTTPS with its certificate, or every tracked link breaks.
 */
async function newHostProblem(front: TrackingFront, domain: Domain): Promise<string | undefined> {
  const host = trackingHost(domain);
  if (!host || domain.configuration_set?.redirect_domain === host) return undefined;
  if (domain.status !== 'verified')
    return `SES has not verified ${domain.domain} yet; it takes ${host} as the tracking host only once it has.`;
  const problem = await front
    .problem(host)
    .catch((error: Error) => `${host} could not be looked at: ${error.message}`);
  // A front that does not serve the host: say where it is added (a refused address says enough).
  return problem?.includes('does not answer over HTTPS')
    ? `${problem}. Add ${host} to the HTTPS front's certificate and alternate names (docs/tracking.md).`
    : problem;
}

/**
 * The domain with its tracking records looked up in DNS (none without a tracking subdomain, or on
 * a deployment without the HTTPS front). The `Tracking` record is `verified` only once the host
 * may be used: its CNAME is in DNS and, for a host not in use yet, SES has verified the domain and
 * the front serves it over HTTPS (else `pending`, with the reason in `tracking_problem`). Never
 * throws: DNS that cannot answer is `temporary_failure`.
 */
export async function withTrackingRecords(deps: DomainDeps, domain: Domain): Promise<Domain> {
  const target = deps.sending?.trackingTarget;
  const { tracking_problem: _stale, ...rest } = domain;
  if (!(domain.tracking_subdomain && target && deps.sending))
    return { ...rest, records: identityRecordsOf(domain.records) };
  const status = await trackingStatus(deps.sending.dns, domain, target);
  const problem = status.cname === 'verified' ? await newHostProblem(deps.sending.front, domain) : undefined;
  const tracking = trackingRecords(domain, target, problem ? { ...status, cname: 'pending' } : status);
  return {
    ...rest,
    records: [...identityRecordsOf(domain.records), ...tracking],
    ...(problem ? { tracking_problem: problem } : {}),
  };
}

/**
 * The domain with the records the service looks up in DNS itself: its tracking records and, with
 * receiving enabled, its `Receiving` record (domains/receiving.ts), looked up side by side. Never throws.
 */
export async function withLookedUpRecords(deps: DomainDeps, domain: Domain): Promise<Domain> {
  const [tracked, receiving] = await Promise.all([
    withTrackingRecords(deps, domain),
    receivingState(deps, domain, DNS_WAIT_MS),
  ]);
  return withReceiving(tracked, receiving);
}

/**
 * The domain with its configuration set brought to what its settings and records need: put to SES
 * first, then recorded (what is recorded is what SES has). With `force`, put even when the record
 * says SES has it already (after a put that was not stored). Throws the provider's IdentityError.
 */
export async function withConfigurationSet(deps: DomainDeps, domain: Domain, force = false): Promise<Domain> {
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
export async function restoreConfigurationSet(deps: DomainDeps, id: string): Promise<void> {
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
  let refreshed = await withLookedUpRecords(deps, {
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
  // Why the tracking host is not used yet, or mail does not arrive, is stored (list-domains shows
  // it), but is no event.
  const changed = !sameState(domain, refreshed);
  if (
    !touch &&
    !changed &&
    domain.tracking_problem === refreshed.tracking_problem &&
    domain.receiving_problem === refreshed.receiving_problem
  )
    return domain;
  // Deleted meanwhile (it stays deleted), or changed by another writer: theirs stands.
  if (!(await deps.domains.save(refreshed, 'existing'))) {
    if (put) await restoreConfigurationSet(deps, domain.id);
    return null;
  }
  if (putFailed) await restoreConfigurationSet(deps, domain.id);
  await retireMovedSet(deps, domain, refreshed);
  if (changed && !sameState(domain, { ...refreshed, configuration_set: renamedBack(refreshed, domain) }))
    await raise(deps, 'domain.updated', refreshed);
  return { ...refreshed, version: (domain.version ?? 0) + 1 };
}

/** How long a deleted domain's configuration set is kept: SES reports opens, clicks and late bounces through it. */
export const RETIRED_SET_KEEP_MS = 30 * 24 * 3600 * 1000;

/** Marks a domain's set (by its name: made or not) for deletion by the scheduled check after `keepMs`. */
export async function retireSet(deps: DomainDeps, id: string, keepMs: number): Promise<void> {
  if (!deps.sending) return;
  const name = deps.sending.configurationSetName(id);
  await deps.domains
    .retireConfigurationSet(name, deps.clock.now().getTime() + keepMs)
    .catch((error) => deps.log?.error('could not retire a configuration set', { name, error }));
}

/**
 * Once a domain's set has moved to its current name (stored), the set it had (named by an older
 * prefix) is retired as a deleted domain's is: kept RETIRED_SET_KEEP_MS for the late events of the
 * emails sent with it, then deleted by the scheduled check. A failure is logged: the old set then
 * stays, unused.
 */
export async function retireMovedSet(deps: DomainDeps, before: Domain, after: Domain): Promise<void> {
  const old = before.configuration_set?.name;
  if (!old || old === after.configuration_set?.name) return;
  await deps.domains
    .retireConfigurationSet(old, deps.clock.now().getTime() + RETIRED_SET_KEEP_MS)
    .catch((error) => deps.log?.error('could not retire a configuration set', { name: old, error }));
}

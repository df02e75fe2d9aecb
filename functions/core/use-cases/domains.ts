import type { Domain, DomainIdentity } from '../domains.js';
import { DOMAIN_ID_PREFIX } from '../domains.js';
import { ApiError, conflict, notFound, validationError } from '../errors.js';
import { isId, newId } from '../ids.js';
import {
  type Clock,
  type Counters,
  type DomainRepository,
  type EventPublisher,
  IdentityError,
  type Log,
  type SendingIdentities,
} from '../ports.js';
import { domainEvent, publishQuietly } from './publish-events.js';

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
export async function createDomain(deps: DomainDeps, name: string): Promise<Domain> {
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
    identity = await deps.identities.create(name);
  } catch (error) {
    await deps.domains.releaseName(name, id).catch(() => undefined);
    if (error instanceof IdentityError) throw identityFailure(name, error);
    throw error;
  }
  const domain: Domain = {
    id,
    domain: name,
    created_at: now.toISOString(),
    checked_at: now.toISOString(),
    ...identity,
  };
  try {
    await deps.domains.save(domain, 'new');
  } catch (error) {
    // The identity stays with the provider, tagged as ours: the retry adopts it.
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

const sameState = (a: DomainIdentity, b: DomainIdentity) =>
  a.status === b.status &&
  a.sendable === b.sendable &&
  JSON.stringify(a.records) === JSON.stringify(b.records);

/**
 * Reads the domain's state from the provider and stores it when it changed (or always, with
 * `touch`, so `checked_at` says when it was last looked at). An identity deleted behind our back
 * makes the domain `failed`. If the provider cannot be read, the stored state is returned as is.
 */
export async function refreshDomain(deps: DomainDeps, domain: Domain, touch = false): Promise<Domain> {
  let identity: DomainIdentity | null;
  try {
    identity = await deps.identities.get(domain.domain);
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
    records: domain.records.map((r) => ({ ...r, status: 'failed' })),
  };
  const refreshed: Domain = { ...domain, ...current, checked_at: deps.clock.now().toISOString() };
  if (!touch && sameState(domain, current)) return domain;
  // A domain deleted meanwhile stays deleted.
  if (!(await deps.domains.save(refreshed, 'existing')))
    throw notFound(`Domain ${JSON.stringify(domain.id)} not found.`);
  if (!sameState(domain, current)) await raise(deps, 'domain.updated', refreshed);
  return refreshed;
}

/** `GET /v1/domains/{id}` and `POST /v1/domains/{id}/verify`: the domain with its status read fresh. */
export async function getDomain(deps: DomainDeps, id: string): Promise<Domain> {
  return refreshDomain(deps, await find(deps, id));
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
    if (
      waiting(domain.status) ||
      // Verified by DKIM while the MAIL FROM records are still being looked for.
      (domain.status === 'verified' && domain.records.some((r) => waiting(r.status))) ||
      (domain.status === 'verified' && now - Date.parse(domain.checked_at) >= VERIFIED_RECHECK_MS)
    )
      due.push(domain);
  }
  due.sort((a, b) => Date.parse(a.checked_at) - Date.parse(b.checked_at));
  let changed = 0;
  const batch = due.slice(0, MAX_CHECKS_PER_RUN);
  for (const domain of batch) {
    try {
      const refreshed = await refreshDomain(deps, domain, true);
      if (refreshed.status !== domain.status) changed++;
    } catch (error) {
      deps.log?.error('domain check failed', { domain_id: domain.id, error });
    }
  }
  return { checked: batch.length, changed };
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

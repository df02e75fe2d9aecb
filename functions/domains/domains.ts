import { ApiError, conflict, notFound, validationError } from '../shared/errors.js';
import { isId, newId } from '../shared/ids.js';
import { AGAIN, optimistically } from '../shared/optimistic.js';
import { type DomainDeps, raise } from './deps.js';
import {
  applyUpdate,
  DEFAULT_SETTINGS,
  DOMAIN_ID_PREFIX,
  type Domain,
  type DomainIdentity,
  type DomainSettings,
  type DomainUpdate,
  mailFromDomain,
} from './model.js';
import { IdentityError } from './ports.js';
import { assertReceivingPossible, requestRuleSync } from './receiving.js';
import {
  RETIRED_SET_KEEP_MS,
  refreshDomain,
  restoreConfigurationSet,
  retireMovedSet,
  retireSet,
  withConfigurationSet,
  withLookedUpRecords,
} from './sync.js';

export {
  checkDomains,
  MAX_CHECKS_PER_RUN,
  MAX_RETIRED_SETS_PER_RUN,
  MOVE_RETRY_MS,
  RULES_RESYNC_MS,
  TRACKING_RECHECK_MS,
  VERIFIED_RECHECK_MS,
} from './check.js';
export type { DomainDeps } from './deps.js';
export { senderOptions, verifiedSenderDomains } from './sending.js';
export { DNS_WAIT_MS, RETIRED_SET_KEEP_MS, refreshDomain } from './sync.js';

/**
 * How long a claim on a name protects a create in progress. Longer than one create request can
 * run (the function's timeout), so only a request that died loses its claim to a retry.
 */
export const CLAIM_LEASE_MS = 15_000;

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
 * The provider's refusal of a new domain's configuration set, in the API's error shape. The
 * identity was made (or adopted) by then and stays in SES, so the answer says what exists: that
 * identity, tagged as this service's, and no domain; adding the name again adopts the identity.
 */
function configurationSetFailure(domain: string, error: IdentityError): ApiError {
  const kept =
    `The domain was not added, but SES now holds the identity ${domain}, which this service created ` +
    `and keeps: adding ${domain} again adopts it.`;
  switch (error.reason) {
    case 'throttled':
      return new ApiError(
        429,
        'rate_limit_exceeded',
        `SES is throttling configuration set requests. ${kept} Try again in a second.`,
        undefined,
        { 'retry-after': '1' },
      );
    case 'unavailable':
      return new ApiError(
        500,
        'internal_server_error',
        `SES could not make ${domain}'s configuration set right now. ${kept}`,
      );
    default:
      return validationError(`SES refused ${domain}'s configuration set: ${error.message}. ${kept}`);
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
  if (settings.receiving) assertReceivingPossible(deps);
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
  domain = await withLookedUpRecords(deps, domain);
  try {
    // The set it needs (TLS enforced) before anything is stored: a refusal leaves nothing behind
    // but the identity, which a retry adopts and the answer names (and a set half made, retired
    // at once).
    domain = await withConfigurationSet(deps, domain);
  } catch (error) {
    await retireSet(deps, id, 0);
    await deps.domains.releaseName(name, id).catch(() => undefined);
    deps.log?.error("could not make a new domain's configuration set", { domain: name, error });
    if (error instanceof IdentityError) throw configurationSetFailure(name, error);
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
  if (domain.receiving) await requestRuleSync(deps, `domain ${domain.id} created receiving`);
  return domain;
}

async function find(deps: Pick<DomainDeps, 'domains'>, id: string): Promise<Domain> {
  const domain = isId(DOMAIN_ID_PREFIX, id) ? await deps.domains.get(id) : null;
  if (!domain) throw notFound(`Domain ${JSON.stringify(id)} not found.`);
  return domain;
}

const SETTING_KEYS = ['open_tracking', 'click_tracking', 'tls', 'tracking_subdomain'] as const;

const sameSettings = (a: DomainSettings, b: DomainSettings) => SETTING_KEYS.every((k) => a[k] === b[k]);

/**
 * `PATCH /v1/domains/{id}`: changes the domain's settings. What SES must hold (TLS enforced, the
 * tracking host) is put in its configuration set before the change is stored; a refusal answers
 * an error and SES is brought back to what is stored. Sends read a domain's settings once a minute
 * per instance, so a change reaches every send within a minute. A change that names receiving asks
 * the receipt-rule writer to follow once stored (asked again by a retry of the same change, so a
 * request that failed after its store is repaired by its retry, as the name item is).
 */
export async function updateDomain(deps: DomainDeps, id: string, update: DomainUpdate): Promise<Domain> {
  const domain = await changeDomain(deps, id, update);
  if (update.capabilities?.receiving !== undefined)
    await requestRuleSync(deps, `domain ${id} receiving ${update.capabilities.receiving}`);
  return domain;
}

async function changeDomain(deps: DomainDeps, id: string, update: DomainUpdate): Promise<Domain> {
  // Whether SES was given a set this request did not store: it must end as what is stored.
  let dirty = false;
  return optimistically(
    `Domain ${id}`,
    async () => {
      const domain = await find(deps, id);
      const settings = applyUpdate(domain, update, domain.domain);
      if (sameSettings(domain, settings) && domain.receiving === settings.receiving) {
        if (dirty) await restoreConfigurationSet(deps, id);
        // What sends read, written again: a request whose change was stored but not its name item
        // (it failed between the two) is repaired by its retry.
        await deps.domains.syncName(domain);
        return domain;
      }
      if (!sameSettings(domain, settings)) assertSettingsPossible(deps, domain, settings);
      if (settings.receiving && !domain.receiving) assertReceivingPossible(deps);
      let changed: Domain;
      try {
        changed = await withConfigurationSet(
          deps,
          await withLookedUpRecords(deps, { ...domain, ...settings }),
          dirty,
        );
      } catch (error) {
        await restoreConfigurationSet(deps, id);
        if (error instanceof IdentityError) throw settingsFailure(domain.domain, error);
        throw error;
      }
      if (await deps.domains.save(changed, 'existing')) {
        await retireMovedSet(deps, domain, changed);
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
  // And the set it has, if named otherwise (by an older prefix).
  if (deps.sending) {
    const names = new Set([deps.sending.configurationSetName(domain.id)]);
    if (domain.configuration_set) names.add(domain.configuration_set.name);
    for (const name of names)
      await deps.domains.retireConfigurationSet(name, deps.clock.now().getTime() + RETIRED_SET_KEEP_MS);
  }
  await deps.domains.delete(domain);
  await raise(deps, 'domain.deleted', domain);
  if (domain.receiving) await requestRuleSync(deps, `domain ${domain.id} deleted`);
  return domain;
}

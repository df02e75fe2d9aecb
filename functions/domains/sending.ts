import { validationError } from '../shared/errors.js';
import type { Clock } from '../shared/ports.js';
import type { SenderOptions } from './model.js';
import type { DomainRepository } from './ports.js';

/** What the send path asks of the domains: which sender domains may send, and how SES sends from each. */

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

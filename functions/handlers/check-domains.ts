import { checkDomains, type DomainDeps } from '../domains/domains.js';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { checkDomainsDeps } from '../wiring.js';

/**
 * Runs on a schedule (EventBridge on AWS, a timer locally): reads the verification state of
 * domains still waiting for DNS, and of verified ones once an hour, and stores what changed, so
 * statuses move without anyone asking.
 */
export const makeHandler = (deps: DomainDeps) => async () => {
  // The webhook endpoints are read once a run, at its first event raised.
  const result = await checkDomains(readOncePerInvocation(deps));
  if (result.checked) log.info('domains checked', result);
  return result;
};

export const handler = backgroundHandler(() => makeHandler(checkDomainsDeps()));

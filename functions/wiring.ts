import { createRepositories } from './adapters/dynamodb/repositories.js';
import { createSesIdentities } from './adapters/ses/identities.js';
import { loadConfig } from './config.js';
import { systemClock } from './core/ports.js';
import type { DomainDeps } from './core/use-cases/domains.js';
import { log } from './http/log.js';

/**
 * What an HTTP function runs on: the table's repositories, the clock, and the per-key rate limit
 * (RATE_LIMIT_PER_SECOND, counted in the table). Built once per container.
 */
export function tableDeps() {
  const { TABLE_NAME, RATE_LIMIT_PER_SECOND } = loadConfig('TABLE_NAME', 'RATE_LIMIT_PER_SECOND');
  const repositories = createRepositories(TABLE_NAME);
  return {
    ...repositories,
    clock: systemClock,
    rateLimit: { counter: repositories.rateCounter, perSecond: RATE_LIMIT_PER_SECOND },
  };
}

/** The domain functions: the above, and SES identities. */
export function domainDeps(): ReturnType<typeof tableDeps> & DomainDeps {
  const { TABLE_NAME } = loadConfig('TABLE_NAME');
  return { ...tableDeps(), identities: createSesIdentities(TABLE_NAME), logError: log.error };
}

import { createRepositories } from './adapters/dynamodb/repositories.js';
import { createSesIdentities } from './adapters/ses/identities.js';
import { loadConfig } from './config.js';
import { systemClock } from './core/ports.js';
import type { DomainDeps } from './core/use-cases/domains.js';
import { log } from './http/log.js';

/** What the domain functions run on: the table's repositories and SES identities, built once per container. */
export function domainDeps(): ReturnType<typeof createRepositories> & DomainDeps {
  const { TABLE_NAME } = loadConfig('TABLE_NAME');
  return {
    ...createRepositories(TABLE_NAME),
    identities: createSesIdentities(TABLE_NAME),
    clock: systemClock,
    logError: log.error,
  };
}

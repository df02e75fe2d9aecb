import { PUBLISHES, type WorkerSpec } from '../shared/function-spec.js';
import { CHANGES_RECEIVING, DOMAIN_SETTINGS, PUT_CONFIGURATION_SET, READ_IDENTITY } from './access.js';

/** The domains' background function: the scheduled check (shared/function-spec.ts). */

export const DOMAIN_WORKERS = {
  'check-domains': {
    description: 'Re-reads the verification of pending sending domains',
    env: ['TABLE_NAME', ...DOMAIN_SETTINGS.env],
    // While any domain receives, each run asks the receipt-rule writer to follow (self-healing).
    ...CHANGES_RECEIVING,
    // Retired sets: listed (Query), deleted from SES, then forgotten (DeleteItem). GetItem: a check
    // that lost its store to another writer (a PATCH meanwhile) reads the domain as stored to put
    // its set back as that says (domains/sync.ts, restoreConfigurationSet).
    table: { actions: ['Query', 'GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
    identities: READ_IDENTITY,
    configurationSets: [...PUT_CONFIGURATION_SET, 'DeleteConfigurationSet'],
    ...PUBLISHES,
  },
} as const satisfies Record<string, WorkerSpec>;

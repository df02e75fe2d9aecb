import { PUBLISHES } from '../shared/function-spec.js';
import type { RouteDeclaration } from '../shared/route.js';
import { CHANGES_RECEIVING, DOMAIN_SETTINGS, PUT_CONFIGURATION_SET, READ_IDENTITY } from './access.js';

/** The domains' routes (shared/route.ts says what a declaration holds; docs.ts has their words). */

const answers = () => import('./answers.js');
const model = () => import('./model.js');

export const createDomainRoute = {
  handler: 'create-domain',
  method: 'POST',
  path: '/v1/domains',
  permission: 'full_access',
  summary: 'Add a sending domain',
  body: { type: 'json' },
  ok: [201],
  errors: [409],
  schemas: async () => ({ body: (await model()).createDomainSchema, answer: (await answers()).domainSchema }),
  access: {
    ...DOMAIN_SETTINGS,
    ...CHANGES_RECEIVING,
    ...PUBLISHES,
    // GetItem: a receiving domain's record reads the receipt-rule writer's view of the rule set.
    actions: ['PutItem', 'DeleteItem', 'Query', 'GetItem'],
    identities: [
      'CreateEmailIdentity',
      'TagResource',
      'GetEmailIdentity',
      'PutEmailIdentityMailFromAttributes',
    ],
    // A new domain's set is named by its new id, yet SES may hold it already: a create whose answer
    // was lost (a timeout, a reset connection) after SES made the set is retried by the SDK and
    // meets AlreadyExistsException, and the set is then brought to its settings by the calls
    // that update one (adapters/ses/configuration-sets.ts).
    configurationSets: PUT_CONFIGURATION_SET,
  },
} as const satisfies RouteDeclaration;

export const listDomainsRoute = {
  handler: 'list-domains',
  method: 'GET',
  path: '/v1/domains',
  permission: 'full_access',
  summary: 'List sending domains, newest first',
  schemas: async () => ({
    query: (await model()).listDomainsQuerySchema,
    answer: (await import('../shared/answers.js')).listOf((await answers()).domainSchema),
  }),
  access: { actions: ['Query'] },
} as const satisfies RouteDeclaration;

// A read that finds SES's state (or DNS) changed stores it, over the version it read (GetItem
// after a lost race), and brings the domain's configuration set along.
/**
 * What reading a domain fresh may do (get and verify; domains/sync.ts): its identity read from
 * SES, its configuration set put when it needs another, and what changed stored, its event raised.
 */
const READ_FRESH = {
  ...DOMAIN_SETTINGS,
  ...PUBLISHES,
  actions: ['GetItem', 'PutItem', 'Query'],
  identities: READ_IDENTITY,
  configurationSets: PUT_CONFIGURATION_SET,
} as const;

export const getDomainRoute = {
  handler: 'get-domain',
  method: 'GET',
  path: '/v1/domains/{id}',
  permission: 'full_access',
  summary: 'Retrieve one domain, with its status read fresh',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).domainSchema }),
  access: READ_FRESH,
} as const satisfies RouteDeclaration;

export const verifyDomainRoute = {
  handler: 'verify-domain',
  method: 'POST',
  path: '/v1/domains/{id}/verify',
  permission: 'full_access',
  summary: 'Check DNS verification now',
  errors: [404],
  schemas: async () => ({ answer: (await answers()).domainSchema }),
  access: READ_FRESH,
} as const satisfies RouteDeclaration;

export const updateDomainRoute = {
  handler: 'update-domain',
  method: 'PATCH',
  path: '/v1/domains/{id}',
  permission: 'full_access',
  summary: "Change a domain's tracking, TLS, tracking subdomain and receiving",
  body: { type: 'json' },
  errors: [404, 409],
  schemas: async () => ({
    body: (await model()).updateDomainSchema,
    answer: (await answers()).domainReferenceSchema,
  }),
  access: {
    ...DOMAIN_SETTINGS,
    ...CHANGES_RECEIVING,
    ...PUBLISHES,
    actions: ['GetItem', 'PutItem', 'Query'],
    configurationSets: PUT_CONFIGURATION_SET,
  },
} as const satisfies RouteDeclaration;

// Its set is retired (PutItem), not deleted: the scheduled check deletes it later.
export const deleteDomainRoute = {
  handler: 'delete-domain',
  method: 'DELETE',
  path: '/v1/domains/{id}',
  permission: 'full_access',
  summary: 'Remove a sending domain',
  errors: [404],
  schemas: async () => ({
    answer: (await import('../shared/answers.js')).deletion('domain'),
  }),
  access: {
    ...DOMAIN_SETTINGS,
    ...CHANGES_RECEIVING,
    ...PUBLISHES,
    actions: ['GetItem', 'DeleteItem', 'Query', 'PutItem'],
    identities: ['DeleteEmailIdentity'],
  },
} as const satisfies RouteDeclaration;

export const DOMAIN_ROUTES = [
  createDomainRoute,
  listDomainsRoute,
  getDomainRoute,
  verifyDomainRoute,
  updateDomainRoute,
  deleteDomainRoute,
] as const;

import { WORKERS_BY_CONCEPT } from '../functions/catalog.js';
import { FALLBACK_HANDLER, ROUTES_BY_CONCEPT } from '../functions/routes.js';

/**
 * The parts of the service the stack deploys apart: each is a nested stack of its own, holding its
 * functions and what each owns (docs/architecture.md, "Stacks"). `pages` is what answers without a
 * concept of its own: the public pages and the fallback route.
 */
export const CONCEPTS = [
  'emails',
  'metrics',
  'domains',
  'templates',
  'api-keys',
  'suppressions',
  'webhooks',
  'request-logs',
  'receiving',
  'contacts',
  'audiences',
  'broadcasts',
  'pages',
] as const;
export type Concept = (typeof CONCEPTS)[number];

/**
 * Where each concept folder's functions go: a stack of its own, but for the public pages (the API
 * reference's and the console's), which go with the fallback route.
 */
const STACK_OF_FOLDER: Record<keyof typeof ROUTES_BY_CONCEPT | keyof typeof WORKERS_BY_CONCEPT, Concept> = {
  emails: 'emails',
  metrics: 'metrics',
  // Usage reads the metrics' counters and the stored SES limits: it goes with the metrics.
  usage: 'metrics',
  domains: 'domains',
  templates: 'templates',
  'api-keys': 'api-keys',
  suppressions: 'suppressions',
  webhooks: 'webhooks',
  'request-logs': 'request-logs',
  receiving: 'receiving',
  // Issue 40: contacts, their imports and the unsubscribe pages in one stack; segments (and the
  // audiences that map onto them), topics and contact properties in another.
  contacts: 'contacts',
  'contact-imports': 'contacts',
  unsubscribe: 'contacts',
  segments: 'audiences',
  topics: 'audiences',
  'contact-properties': 'audiences',
  // Issue 41: the broadcasts' routes, their fan-out and the broadcast lane's consumer.
  broadcasts: 'broadcasts',
  'api-reference': 'pages',
  console: 'pages',
};

/**
 * Each function's concept, from the declarations: the folder whose routes.ts declares its route, or
 * whose workers.ts its background function (the fallback route goes with the pages).
 */
const CONCEPT_OF = new Map<string, Concept>([
  [FALLBACK_HANDLER, 'pages'],
  ...Object.entries(ROUTES_BY_CONCEPT).flatMap(([folder, routes]) =>
    routes.map((route): [string, Concept] => [
      route.handler,
      STACK_OF_FOLDER[folder as keyof typeof STACK_OF_FOLDER],
    ]),
  ),
  ...Object.entries(WORKERS_BY_CONCEPT).flatMap(([folder, workers]) =>
    Object.keys(workers).map((name): [string, Concept] => [
      name,
      STACK_OF_FOLDER[folder as keyof typeof STACK_OF_FOLDER],
    ]),
  ),
]);

/** The concept a function belongs to; one the catalog does not know fails the synth. */
export function conceptOf(name: string): Concept {
  const concept = CONCEPT_OF.get(name);
  if (!concept) throw new Error(`the function "${name}" is declared in no concept's routes.ts or workers.ts`);
  return concept;
}

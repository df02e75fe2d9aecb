import type { FunctionName } from '../functions/catalog.js';

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
  'pages',
] as const;
export type Concept = (typeof CONCEPTS)[number];

/**
 * Each function's concept: the one place the stack reads it from, until each concept declares its
 * own routes and functions. Typed by the catalog, so a function added there without a concept here
 * fails the type check.
 */
const CONCEPT_OF: Record<FunctionName, Concept> = {
  'send-email': 'emails',
  'send-batch': 'emails',
  'list-emails': 'emails',
  'get-email': 'emails',
  'update-email': 'emails',
  'cancel-email': 'emails',
  'list-attachments': 'emails',
  'get-attachment': 'emails',
  'process-send-queue': 'emails',
  'process-ses-events': 'emails',
  'sweep-emails': 'emails',
  'dispatch-scheduled': 'emails',
  'get-email-metrics': 'metrics',
  'roll-up-metrics': 'metrics',
  'create-domain': 'domains',
  'list-domains': 'domains',
  'get-domain': 'domains',
  'verify-domain': 'domains',
  'update-domain': 'domains',
  'delete-domain': 'domains',
  'check-domains': 'domains',
  'create-template': 'templates',
  'list-templates': 'templates',
  'get-template': 'templates',
  'update-template': 'templates',
  'delete-template': 'templates',
  'publish-template': 'templates',
  'duplicate-template': 'templates',
  'create-api-key': 'api-keys',
  'list-api-keys': 'api-keys',
  'update-api-key': 'api-keys',
  'delete-api-key': 'api-keys',
  'add-suppression': 'suppressions',
  'batch-add-suppressions': 'suppressions',
  'list-suppressions': 'suppressions',
  'get-suppression': 'suppressions',
  'delete-suppression': 'suppressions',
  'batch-remove-suppressions': 'suppressions',
  'create-webhook': 'webhooks',
  'list-webhooks': 'webhooks',
  'get-webhook': 'webhooks',
  'update-webhook': 'webhooks',
  'delete-webhook': 'webhooks',
  'rotate-webhook-secret': 'webhooks',
  'list-webhook-events': 'webhooks',
  'get-webhook-event': 'webhooks',
  'list-webhook-attempts': 'webhooks',
  'replay-webhook-event': 'webhooks',
  'deliver-webhooks': 'webhooks',
  'requeue-webhook-retries': 'webhooks',
  'list-logs': 'request-logs',
  'get-log': 'request-logs',
  'write-request-logs': 'request-logs',
  'get-openapi': 'pages',
  'get-api-reference': 'pages',
  'get-console': 'pages',
  'get-console-asset': 'pages',
  'route-not-found': 'pages',
};

/** The concept a function belongs to; one the catalog does not know fails the synth. */
export function conceptOf(name: string): Concept {
  const concept = (CONCEPT_OF as Record<string, Concept | undefined>)[name];
  if (!concept) throw new Error(`lib/concepts.ts gives the function "${name}" no concept`);
  return concept;
}

import { createHash } from 'node:crypto';

/**
 * The logical ids the stack's stateful resources had before they moved into constructs. An update
 * keeps them, so it replaces nothing that holds data or an address: the table (retained, with every
 * email), the queues (with messages in flight), the topic and configuration set (SES publishes to
 * them), the API (its id is its URL) and its stage, and the log groups (their 30 days of logs).
 * Everything else (functions, roles, integrations, alarms) may be replaced by an update: see the
 * docs/operations.md, "Upgrading".
 */
export const LEGACY_IDS = {
  table: 'TableCD117FA1',
  sendQueue: 'SendQueue1F034DCA',
  sendDeadLetterQueue: 'SendDeadLetterQueue75EE196E',
  eventsQueue: 'SesEventsQueueF9CC1F5C',
  eventsDeadLetterQueue: 'SesEventsDeadLetterQueueA25A86A6',
  eventsTopic: 'SesEventsTopic6E3F217C',
  configurationSet: 'ConfigurationSet3DD38186',
  configurationSetEventDestination: 'ConfigurationSetToSnsDBE56006',
  api: 'ApiF70053CD',
  stage: 'DefaultStageEE28A986',
  accessLogs: 'ApiAccessLogsE9DF007D',
  // Two policies, or two subscriptions, of one queue or topic cannot live side by side: deleting the
  // old one would clear what the new one set. So these keep their ids too, and are updated in place.
  sendQueuePolicy: 'SendQueuePolicy9E99BDAF',
  sendDeadLetterQueuePolicy: 'SendDeadLetterQueuePolicy672C0163',
  eventsQueuePolicy: 'SesEventsQueuePolicy9566CAE4',
  eventsDeadLetterQueuePolicy: 'SesEventsDeadLetterQueuePolicy1F421A2F',
  eventsTopicPolicy: 'SesEventsTopicPolicy42FBDD9F',
} as const;

/**
 * The logical id CDK gives the resource at this construct path (its makeUniqueId): for ids that
 * depend on a name (the stack's) or that are many (the routes), computed rather than listed.
 */
export function logicalIdAt(path: readonly string[]): string {
  const components = path.filter((c) => c !== 'Default');
  const alphanumeric = (c: string) => c.replace(/[^A-Za-z0-9]/g, '');
  if (components.length === 1) return alphanumeric(components[0] as string);
  const hash = createHash('md5').update(components.join('/')).digest('hex').slice(0, 8).toUpperCase();
  const human: string[] = [];
  for (const c of components) if (!human.at(-1)?.endsWith(c)) human.push(c);
  return (
    human
      .filter((c) => c !== 'Resource')
      .map(alphanumeric)
      .join('')
      .slice(0, 240) + hash
  );
}

/** A route's id when the API was the stack's `Api` construct (a route exists once per API). */
export const legacyRouteId = (routeConstructId: string) => logicalIdAt(['Api', routeConstructId, 'Resource']);

/** The events queue's subscription to the topic, when both sat at the stack's top level. */
export const legacyEventsSubscriptionId = (stackName: string) =>
  logicalIdAt(['SesEventsQueue', logicalIdAt([stackName, 'SesEventsTopic']), 'Resource']);

/** Each function's log group, by function. */
export const LEGACY_LOG_GROUP_IDS: Record<string, string> = {
  'route-not-found': 'RouteNotFoundLogsE02AD86E',
  'send-email': 'SendEmailLogs21EB7BC6',
  'list-emails': 'ListEmailsLogs5269D442',
  'get-email': 'GetEmailLogs8866923F',
  'create-domain': 'CreateDomainLogs590F05BB',
  'list-domains': 'ListDomainsLogsD6A42EF9',
  'get-domain': 'GetDomainLogs8685125E',
  'verify-domain': 'VerifyDomainLogs8D945E8F',
  'delete-domain': 'DeleteDomainLogs36D44FA4',
  'create-api-key': 'CreateApiKeyLogs8F575FA7',
  'list-api-keys': 'ListApiKeysLogs69208400',
  'delete-api-key': 'DeleteApiKeyLogs10812224',
  'process-send-queue': 'ProcessSendQueueLogsB4CFE8CA',
  'process-ses-events': 'ProcessSesEventsLogs8719A306',
  'sweep-emails': 'SweepEmailsLogs695C0977',
  'check-domains': 'CheckDomainsLogs6C725BC0',
};

/**
 * The construct paths (under the stack) of the log groups of the functions that are neither routes
 * nor in LEGACY_LOG_GROUP_IDS, when every function was in the one template.
 */
const LOG_GROUP_PATHS: Record<string, readonly string[]> = {
  'deliver-webhooks': ['Webhooks', 'Delivery', 'Logs'],
  'write-request-logs': ['RequestLogs', 'Writer', 'Logs'],
};

/**
 * The logical id of a function's log group: the one it had when every function was in the one
 * template (a route's function was `Http/<handler>`), so the log groups stay where they were, with
 * their logs, while the functions move to their concepts' stacks. A function added since, other
 * than a route's, has none: its log group takes the id of where it is made.
 */
export function logGroupIdOf(name: string, { route }: { route: boolean }): string | undefined {
  const legacy = LEGACY_LOG_GROUP_IDS[name];
  if (legacy) return legacy;
  const path = route ? ['Http', name, 'Logs'] : LOG_GROUP_PATHS[name];
  return path ? logicalIdAt([...path, 'Resource']) : undefined;
}

/** Pins a construct's CloudFormation resource to a logical id it had before. */
export function keepLogicalId(construct: { node: { defaultChild?: unknown } }, logicalId: string) {
  (construct.node.defaultChild as { overrideLogicalId(id: string): void }).overrideLogicalId(logicalId);
}

import { newSesClient, newSesSendClient, newSqsClient } from './adapters/aws-clients.js';
import { createRepositories } from './adapters/dynamodb/repositories.js';
import { createSesIdentities } from './adapters/ses/identities.js';
import { SesMailer } from './adapters/ses/mailer.js';
import { SesSuppressions } from './adapters/ses/suppressions.js';
import { SqsDeadLetters, SqsEmailQueue } from './adapters/sqs/email-queue.js';
import { FUNCTIONS } from './catalog.js';
import { loadConfig } from './config.js';
import { systemClock } from './core/ports.js';
import type { DomainDeps } from './core/use-cases/domains.js';
import { verifiedSenderDomains } from './core/use-cases/domains.js';
import type { SweepDeps } from './core/use-cases/sweep.js';
import { log } from './observability/logger.js';
import { counters } from './observability/metrics.js';

/**
 * Where every function's dependencies are built, once per container, from exactly the environment
 * its catalog entry names (functions/catalog.ts; a test holds the stack to it). Handlers take what
 * these return and nothing else.
 */

/** The functions behind the API routes (and the fallback). */
export type ApiFunction = Exclude<
  keyof typeof FUNCTIONS,
  'process-send-queue' | 'process-ses-events' | 'check-domains' | 'sweep-emails'
>;
type DomainFunction = 'create-domain' | 'get-domain' | 'verify-domain' | 'delete-domain';

/** An API function: the table's repositories, the clock, the per-key rate limit, logs and metrics. */
export function apiDeps(name: ApiFunction) {
  const spec = FUNCTIONS[name];
  const { TABLE_NAME, RATE_LIMIT_PER_SECOND, FRONT_DOOR_SECRET } = loadConfig(
    ...spec.env,
    ...spec.optionalEnv,
  );
  const repositories = createRepositories(TABLE_NAME);
  return {
    ...repositories,
    frontDoorSecret: FRONT_DOOR_SECRET,
    clock: systemClock,
    rateLimit: { counter: repositories.rateCounter, perSecond: RATE_LIMIT_PER_SECOND },
    log,
    counters,
  };
}

/** The domain functions: the above, and SES identities. */
export function domainApiDeps(name: DomainFunction): ReturnType<typeof apiDeps> & DomainDeps {
  const deps = apiDeps(name);
  const { TABLE_NAME } = loadConfig(...FUNCTIONS[name].env);
  return { ...deps, identities: createSesIdentities(TABLE_NAME) };
}

/** The functions that take addresses off the suppression list: the above, and SES's own list. */
export function suppressionDeps(name: 'delete-suppression' | 'batch-remove-suppressions') {
  return { ...apiDeps(name), providerSuppressions: new SesSuppressions(newSesClient()) };
}

/** send-email: the above, the send queue, and the verified sender domains (remembered a minute). */
export function sendEmailDeps(name: 'send-email' | 'send-batch' = 'send-email') {
  const deps = apiDeps(name);
  const { SEND_QUEUE_URL } = loadConfig(...FUNCTIONS[name].env);
  return {
    ...deps,
    queue: new SqsEmailQueue(newSqsClient(), SEND_QUEUE_URL),
    assertSenderDomain: verifiedSenderDomains(deps.domains, deps.clock),
  };
}

/** The send consumer: the emails, and SES with one attempt per call and bounded waits. */
export function consumerDeps() {
  const config = loadConfig(...FUNCTIONS['process-send-queue'].env);
  const ses = newSesSendClient({
    connectMs: config.SES_CONNECT_TIMEOUT_MS,
    requestMs: config.SES_REQUEST_TIMEOUT_MS,
  });
  const { emails, suppressions } = createRepositories(config.TABLE_NAME);
  return {
    emails,
    suppressions,
    mailer: new SesMailer(ses, config.CONFIGURATION_SET_NAME),
    clock: systemClock,
    maxReceiveCount: config.SEND_MAX_RECEIVE_COUNT,
    log,
    counters,
  };
}

/** The SES events consumer: the emails and the suppression list. */
export function eventsConsumerDeps() {
  const { TABLE_NAME } = loadConfig(...FUNCTIONS['process-ses-events'].env);
  const { emails, suppressions } = createRepositories(TABLE_NAME);
  return { emails, suppressions, log, counters };
}

/** The scheduled domain check: the domains and SES identities. */
export function checkDomainsDeps(): DomainDeps {
  const { TABLE_NAME } = loadConfig(...FUNCTIONS['check-domains'].env);
  return {
    domains: createRepositories(TABLE_NAME).domains,
    identities: createSesIdentities(TABLE_NAME),
    clock: systemClock,
    log,
  };
}

/** The sweeper: the queued emails, the send queue and its dead-letter queue, and its bounds. */
export function sweepDeps(): SweepDeps {
  const config = loadConfig(...FUNCTIONS['sweep-emails'].env);
  const repositories = createRepositories(config.TABLE_NAME);
  const sqs = newSqsClient();
  return {
    emails: repositories.emails,
    store: repositories.sweep,
    queue: new SqsEmailQueue(sqs, config.SEND_QUEUE_URL),
    deadLetters: new SqsDeadLetters(sqs, config.SEND_DEAD_LETTER_QUEUE_URL),
    clock: systemClock,
    settings: {
      requeueAfterMs: config.SWEEP_REQUEUE_AFTER_MS,
      backlogGraceMs: config.SWEEP_BACKLOG_GRACE_MS,
      unknownOutcomeAfterMs: config.SWEEP_UNKNOWN_OUTCOME_AFTER_MS,
      finalEventsAfterMs: config.SWEEP_FINAL_EVENTS_AFTER_MS,
      oldCheckEveryMs: config.SWEEP_OLD_CHECK_EVERY_MS,
      maxPerRun: 500,
      maxOldPerCheck: 5_000,
      maxDeadLettersPerRun: 100,
      maxAttempts: config.SEND_MAX_RECEIVE_COUNT,
    },
    log,
    counters,
  };
}

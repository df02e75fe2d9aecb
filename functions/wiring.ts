import { newSesSendClient, newSqsClient } from './adapters/aws-clients.js';
import { createRepositories } from './adapters/dynamodb/repositories.js';
import { createSesIdentities } from './adapters/ses/identities.js';
import { SesMailer } from './adapters/ses/mailer.js';
import { SqsDeadLetters, SqsEmailQueue } from './adapters/sqs/email-queue.js';
import { loadConfig } from './config.js';
import { systemClock } from './core/ports.js';
import type { DomainDeps } from './core/use-cases/domains.js';
import type { SweepDeps } from './core/use-cases/sweep.js';
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

/** The send queue (what send-email and the sweeper put jobs on). */
export function sendQueue(sqs = newSqsClient()) {
  const { SEND_QUEUE_URL } = loadConfig('SEND_QUEUE_URL');
  return new SqsEmailQueue(sqs, SEND_QUEUE_URL);
}

/** The send consumer: the emails, and SES with one attempt per call and bounded waits. */
export function consumerDeps() {
  const config = loadConfig(
    'TABLE_NAME',
    'CONFIGURATION_SET_NAME',
    'SEND_MAX_RECEIVE_COUNT',
    'SES_CONNECT_TIMEOUT_MS',
    'SES_REQUEST_TIMEOUT_MS',
  );
  const ses = newSesSendClient({
    connectMs: config.SES_CONNECT_TIMEOUT_MS,
    requestMs: config.SES_REQUEST_TIMEOUT_MS,
  });
  return {
    emails: createRepositories(config.TABLE_NAME).emails,
    mailer: new SesMailer(ses, config.CONFIGURATION_SET_NAME),
    clock: systemClock,
    maxReceiveCount: config.SEND_MAX_RECEIVE_COUNT,
    logError: log.error,
  };
}

/** The sweeper: the queued emails, the send queue and its dead-letter queue, and its bounds. */
export function sweepDeps(): SweepDeps {
  const config = loadConfig(
    'TABLE_NAME',
    'SEND_MAX_RECEIVE_COUNT',
    'SEND_DEAD_LETTER_QUEUE_URL',
    'SWEEP_REQUEUE_AFTER_MS',
    'SWEEP_BACKLOG_GRACE_MS',
    'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
    'SWEEP_FINAL_EVENTS_AFTER_MS',
    'SWEEP_OLD_CHECK_EVERY_MS',
  );
  const repositories = createRepositories(config.TABLE_NAME);
  const sqs = newSqsClient();
  return {
    emails: repositories.emails,
    store: repositories.sweep,
    queue: sendQueue(sqs),
    deadLetters: new SqsDeadLetters(sqs, config.SEND_DEAD_LETTER_QUEUE_URL),
    clock: systemClock,
    settings: {
      requeueAfterMs: config.SWEEP_REQUEUE_AFTER_MS,
      unknownOutcomeAfterMs: config.SWEEP_UNKNOWN_OUTCOME_AFTER_MS,
      finalEventsAfterMs: config.SWEEP_FINAL_EVENTS_AFTER_MS,
      oldCheckEveryMs: config.SWEEP_OLD_CHECK_EVERY_MS,
      backlogGraceMs: config.SWEEP_BACKLOG_GRACE_MS,
      maxPerRun: 500,
      maxOldPerCheck: 5_000,
      maxDeadLettersPerRun: 100,
      maxAttempts: config.SEND_MAX_RECEIVE_COUNT,
    },
    log: log.warn,
  };
}

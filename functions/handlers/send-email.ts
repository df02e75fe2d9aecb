import { SQSClient } from '@aws-sdk/client-sqs';
import { createRepositories } from '../adapters/dynamodb/repositories.js';
import { SqsEmailQueue } from '../adapters/sqs/email-queue.js';
import { loadConfig } from '../config.js';
import { sendEmailSchema } from '../core/email.js';
import { systemClock } from '../core/ports.js';
import { verifiedSenderDomains } from '../core/use-cases/domains.js';
import { type SendEmailDeps, sendEmail } from '../core/use-cases/send-email.js';
import { log } from '../http/log.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';

/** POST /v1/emails: validate, store as queued, enqueue; 200 with `{id, status, created_at}`. */
export const makeHandler = (deps: HttpDeps & SendEmailDeps) =>
  httpHandler(deps, { jsonBody: true }, async ({ body }) => ({
    statusCode: 200,
    body: await sendEmail(deps, parseInput(sendEmailSchema, body)),
  }));

export const handler = lazyHttpHandler(() => {
  const { TABLE_NAME, SEND_QUEUE_URL } = loadConfig('TABLE_NAME', 'SEND_QUEUE_URL');
  const repositories = createRepositories(TABLE_NAME);
  return makeHandler({
    ...repositories,
    // Per container: a verified domain is remembered for a minute, so most sends read nothing.
    assertSenderDomain: verifiedSenderDomains(repositories.domains, systemClock),
    queue: new SqsEmailQueue(new SQSClient({}), SEND_QUEUE_URL),
    clock: systemClock,
    logError: log.error,
  });
});

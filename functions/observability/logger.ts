import { Logger } from '@aws-lambda-powertools/logger';
import type { Log } from '../shared/ports.js';
import { sourceMapped } from './source-maps.js';

/**
 * The one logger of every function (Powertools: JSON lines with the request id, function name and
 * cold start, once the Lambda context is injected; see middleware.ts). Its level comes from
 * POWERTOOLS_LOG_LEVEL (the stack sets it) or LOG_LEVEL (`silent` in tests). What is logged is
 * always named fields: never an event, headers, a key or a body, so secrets cannot reach a log.
 */
/** The level the environment asks for. Powertools reads its variables case-sensitively; `silent` or `debug` work here too. */
export const configuredLogLevel = () =>
  (process.env.POWERTOOLS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'INFO').toUpperCase() as 'INFO';

export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'email-service',
  logLevel: configuredLogLevel(),
  // An error's stack names the sources (source-maps.ts), worked out only when it is logged.
  jsonReplacerFn: (_key, value) => sourceMapped(value),
});

/** A Powertools logger as the use cases see it (shared/ports.ts). */
export const toLog = (from: Logger): Log => ({
  info: (message, fields) => (fields ? from.info(message, fields) : from.info(message)),
  warn: (message, fields) => (fields ? from.warn(message, fields) : from.warn(message)),
  error: (message, fields) => (fields ? from.error(message, fields) : from.error(message)),
});

export const log: Log = toLog(logger);

/** A log whose every line names this email (for work on one email among a batch's). */
export const logFor = (emailId: string): Log =>
  toLog(logger.createChild({ persistentKeys: { email_id: emailId } }));

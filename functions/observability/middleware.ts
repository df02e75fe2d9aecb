import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { onLambda } from '../shared/config.js';
import { logger } from './logger.js';
import { flushMetrics } from './metrics.js';
import { sourceMapped } from './source-maps.js';

/**
 * What every function's invocation goes through, first: the Lambda context into every log line
 * (request id, function name, cold start), keys added during the invocation dropped after it, and
 * the invocation's metrics written at its end, whether it succeeded or failed. An error no other
 * middleware answered leaves the handler with its stack in source terms (source-maps.ts), since
 * Lambda logs that stack as it is; an answered one (a 404, a 400) maps nothing.
 */
export const observe = (): MiddlewareObj<unknown, unknown, Error, Context> => ({
  before: async ({ context }) => {
    logger.resetKeys();
    logger.addContext(context);
  },
  after: async () => flushMetrics(),
  onError: async (request) => {
    await flushMetrics();
    // Its onError runs last (it is the first middleware): no response yet means Lambda gets the error.
    if (request.response === undefined) sourceMapped(request.error);
  },
});

/**
 * A queue or schedule function's handler, observed like every invocation. On Lambda it is built
 * (clients, configuration) during the init, so an invalid setting fails the init naming it;
 * elsewhere on first use. A failure to build or to run is thrown, which Lambda counts as an error.
 */
export function backgroundHandler<E, R>(build: () => (event: E, context: Context) => Promise<R>) {
  let built: ((event: E, context: Context) => Promise<R>) | undefined = onLambda() ? build() : undefined;
  return middy(async (event: E, context: Context) => {
    built ??= build();
    return built(event, context);
  }).use(observe() as MiddlewareObj<E, R, Error, Context>);
}

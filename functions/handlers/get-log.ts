import { requestLogRepository } from '../adapters/dynamodb/repositories.js';
import { keyNamesOf } from '../api-keys/api-keys.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { isLogId, requestLogsAreOff } from '../request-logs/model.js';
import type { RequestLogRepository } from '../request-logs/ports.js';
import { toLogResponse } from '../request-logs/reads.js';
import { getLogRoute } from '../request-logs/routes.js';
import { notFound } from '../shared/errors.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/logs/{id}: one request's log, with its (redacted) request and response bodies. Not logged itself. */
export const makeHandler = (
  deps: HttpDeps & {
    requestLogs: RequestLogRepository;
    /** The stack's requestLogs setting is false: nothing is recorded, and this route says so (404). */
    requestLogsOff?: boolean;
  },
) =>
  httpHandler(deps, getLogRoute, async ({ params }) => {
    if (deps.requestLogsOff) throw requestLogsAreOff();
    const id = params.id ?? '';
    // Not a log id: no such log (ids are UUIDs; anything else names nothing).
    const entry = isLogId(id) ? await deps.requestLogs.get(id) : null;
    if (!entry) throw notFound(`Log ${id} not found.`);
    const names = await keyNamesOf(deps.apiKeys, [entry.api_key_id]);
    return { statusCode: 200, body: toLogResponse(entry, names) };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('get-log', { requestLogs: requestLogRepository })),
);

import { requestLogRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { requestLogsAreOff } from '../request-logs/model.js';
import type { RequestLogRepository } from '../request-logs/ports.js';
import { listLogsQuerySchema, toLogSummary } from '../request-logs/reads.js';
import { listLogsRoute } from '../request-logs/routes.js';
import { apiDeps } from '../wiring.js';

/**
 * GET /v1/logs: `{object: "list", has_more, data}`, newest first; `status` (2xx, 3xx, 4xx, 5xx)
 * keeps one class of answers. Its own reads are not logged (docs/logs.md).
 */
export const makeHandler = (
  deps: HttpDeps & {
    requestLogs: RequestLogRepository;
    /** The stack's requestLogs setting is false: nothing is recorded, and this route says so (404). */
    requestLogsOff?: boolean;
  },
) =>
  httpHandler(deps, listLogsRoute, async ({ query }) => {
    if (deps.requestLogsOff) throw requestLogsAreOff();
    const page = await deps.requestLogs.list(parseInput(listLogsQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toLogSummary) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-logs', { requestLogs: requestLogRepository })),
);

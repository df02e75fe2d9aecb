import { requestLogRepository } from '../adapters/dynamodb/repositories.js';
import { keyNamesOf } from '../api-keys/api-keys.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { requestLogsAreOff } from '../request-logs/model.js';
import type { RequestLogRepository } from '../request-logs/ports.js';
import { listLogsQuerySchema, toLogSummary } from '../request-logs/reads.js';
import { listLogsRoute } from '../request-logs/routes.js';
import { apiDeps } from '../wiring.js';

/**
 * GET /v1/logs: `{object: "list", has_more, data}`, newest first; `status` (2xx, 3xx, 4xx, 5xx)
 * keeps one class of answers, and our `method`, `path` and `api_key_id` narrow it (a filtered page
 * reads a bounded number of logs: `scanned_to`). Each log names its key (`api_key_name`, read by
 * id). Its own reads are not logged (docs/logs.md).
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
    const names = await keyNamesOf(
      deps.apiKeys,
      page.data.map((entry) => entry.api_key_id),
    );
    return {
      statusCode: 200,
      body: {
        object: 'list',
        has_more: page.has_more,
        data: page.data.map((entry) => toLogSummary(entry, names)),
        ...(page.scanned_to === undefined ? {} : { scanned_to: page.scanned_to }),
      },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-logs', { requestLogs: requestLogRepository })),
);

import type { PageQuery } from '../shared/list.js';
import type { RequestLogEntry, StatusClass } from './model.js';

/**
 * A page of the request logs (`GET /v1/logs`), filtered by status class and (ours) by method, path
 * (a prefix of the endpoint) and the key that made the request.
 */
export interface ListLogsQuery extends PageQuery {
  status?: StatusClass;
  method?: string;
  path?: string;
  api_key_id?: string;
}

/** A page of logs. `scanned_to`: a filtered page stopped at its read bound (reads.ts LOG_FILTER_READ_BOUND). */
export interface LogPage {
  data: RequestLogEntry[];
  has_more: boolean;
  /** The last log read (a filtered page cut short by its bound): the cursor to read on from. */
  scanned_to?: string;
}

/** Where request logs are kept and read (adapters/dynamodb/request-log-repository.ts). */
export interface RequestLogRepository {
  /** Stores entries; storing one again (a line delivered twice) writes the same item. */
  put(entries: readonly RequestLogEntry[], retentionDays: number): Promise<void>;
  list(query: ListLogsQuery): Promise<LogPage>;
  get(id: string): Promise<RequestLogEntry | null>;
}

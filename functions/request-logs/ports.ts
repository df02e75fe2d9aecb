import type { PageQuery } from '../shared/list.js';
import type { RequestLogEntry, StatusClass } from './model.js';

/** A page of the request logs, filtered by status class (`GET /v1/logs`). */
export interface ListLogsQuery extends PageQuery {
  status?: StatusClass;
}

/** Where request logs are kept and read (adapters/dynamodb/request-log-repository.ts). */
export interface RequestLogRepository {
  /** Stores entries; storing one again (a line delivered twice) writes the same item. */
  put(entries: readonly RequestLogEntry[], retentionDays: number): Promise<void>;
  list(query: ListLogsQuery): Promise<{ data: RequestLogEntry[]; has_more: boolean }>;
  get(id: string): Promise<RequestLogEntry | null>;
}

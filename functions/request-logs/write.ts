import type { Log } from '../shared/ports.js';
import type { RequestLogEntry } from './model.js';
import type { RequestLogRepository } from './ports.js';
import { parseRequestLogLine } from './reads.js';

/**
 * The writer's work: the request-log entries among a function's log lines, stored. Lines that are
 * not entries (the subscription's filter lets only marked JSON lines through; anything else that
 * slips in) are skipped and counted. Storing is idempotent: each entry is the item of its id.
 */
export async function storeRequestLogs(
  deps: { requestLogs: RequestLogRepository; retentionDays: number; log?: Log },
  messages: readonly string[],
): Promise<{ stored: number; skipped: number }> {
  const entries: RequestLogEntry[] = [];
  for (const message of messages) {
    const entry = parseRequestLogLine(message);
    if (entry) entries.push(entry);
  }
  const skipped = messages.length - entries.length;
  if (skipped > 0) deps.log?.warn('lines that are not request logs were skipped', { skipped });
  if (entries.length > 0) await deps.requestLogs.put(entries, deps.retentionDays);
  return { stored: entries.length, skipped };
}

import type { Log } from '../shared/ports.js';
import type { RequestLogEntry } from './model.js';
import type { RequestLogRepository } from './ports.js';
import { parseRequestLogLine } from './reads.js';

const DAY_MS = 86_400_000;

/**
 * The writer's work: the request-log entries among a function's log lines, stored. Lines that are
 * not entries (the subscription's filter lets only marked JSON lines through; anything else that
 * slips in) are skipped and counted. Storing is idempotent: each entry is the item of its id.
 * Each is kept `retentionDays` from its request (its TTL); one delivered after that (a batch that
 * waited in the retry queue) is not stored at all. `bodies: false` (the stack's requestLogBodies):
 * an entry's bodies are dropped before it is stored, so a line written before the setting changed
 * (a function instance still running the old one, a batch waiting for a retry) leaves none either.
 */
export async function storeRequestLogs(
  deps: {
    requestLogs: RequestLogRepository;
    retentionDays: number;
    /** @default true */
    bodies?: boolean;
    log?: Log;
    /** @default Date.now */
    now?: () => number;
  },
  messages: readonly string[],
): Promise<{ stored: number; skipped: number; expired: number }> {
  const entries: RequestLogEntry[] = [];
  const oldest = (deps.now ?? Date.now)() - deps.retentionDays * DAY_MS;
  let expired = 0;
  for (const message of messages) {
    const entry = parseRequestLogLine(message);
    if (!entry) continue;
    if (Date.parse(entry.created_at) <= oldest) expired++;
    else entries.push(deps.bodies === false ? { ...entry, request_body: null, response_body: null } : entry);
  }
  const skipped = messages.length - entries.length - expired;
  if (skipped > 0) deps.log?.warn('lines that are not request logs were skipped', { skipped });
  if (expired > 0) deps.log?.info('request logs past their retention were not stored', { expired });
  if (entries.length > 0) await deps.requestLogs.put(entries, deps.retentionDays);
  return { stored: entries.length, skipped, expired };
}

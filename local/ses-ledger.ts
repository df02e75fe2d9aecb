import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { SentMessage } from './mailbox-simulator.js';

/**
 * The local SES's memory of what it was handed, one JSON line per event, appended synchronously
 * before SES answers (so a SIGKILL cannot lose a message SES said it took):
 *   {"type":"refused","emailId":…,"error":…}   SES refused a SendEmail for the account's limits
 *                                             (its rate, quota, sandbox or paused sending)
 *   {"type":"forwarded","emailId":…}   a SendEmail reached SES (written before SES decides)
 *   {"type":"accepted","emailId":…,"message":{…}}   SES took it; its events are owed
 *
 * On AWS, SES keeps this itself and publishes every event it owes. Locally the events queue is in
 * memory, so at a restart the service asks the ledger which emails SES took and publishes their
 * events again (they are idempotent). `forwarded` lines count how often each email reached SES:
 * `npm run chaos` reads them to prove no email was handed over twice.
 */
export interface LedgerEntry {
  type: 'forwarded' | 'accepted' | 'refused';
  emailId: string;
  at: string;
  /** A refusal's SES error type (`TooManyRequestsException`, …). */
  error?: string;
  message?: Omit<SentMessage, 'sentAt'> & { sentAt: string };
}

/** Past this size, a start keeps only the entries of emails that are not final yet. */
const COMPACT_BYTES = 8 * 1024 * 1024;

export class SesLedger {
  private readonly memory: LedgerEntry[] = [];

  /** `file`: where the ledger is kept; none keeps it in memory (gone with the process). */
  constructor(private readonly file?: string) {
    if (file) mkdirSync(dirname(file), { recursive: true });
  }

  forwarded(emailId: string) {
    this.append({ type: 'forwarded', emailId, at: new Date().toISOString() });
  }

  refused(emailId: string, error: string) {
    this.append({ type: 'refused', emailId, at: new Date().toISOString(), error });
  }

  accepted(emailId: string, message: SentMessage) {
    this.append({
      type: 'accepted',
      emailId,
      at: new Date().toISOString(),
      message: { ...message, sentAt: message.sentAt.toISOString() },
    });
  }

  entries(): LedgerEntry[] {
    if (!this.file) return [...this.memory];
    if (!existsSync(this.file)) return [];
    const entries: LedgerEntry[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line) as LedgerEntry);
      } catch {
        // A line cut short by a kill mid-write: nothing was answered for it.
      }
    }
    return entries;
  }

  /** The messages SES took, one per message id, with the email each belongs to. */
  acceptedMessages(): { emailId: string; message: SentMessage }[] {
    const byId = new Map<string, { emailId: string; message: SentMessage }>();
    for (const entry of this.entries())
      if (entry.type === 'accepted' && entry.message)
        byId.set(entry.message.messageId, {
          emailId: entry.emailId,
          message: { ...entry.message, sentAt: new Date(entry.message.sentAt) },
        });
    return [...byId.values()];
  }

  /** How many times each email reached SES. */
  forwardCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const entry of this.entries())
      if (entry.type === 'forwarded') counts.set(entry.emailId, (counts.get(entry.emailId) ?? 0) + 1);
    return counts;
  }

  /** Once large, keeps only the entries of emails still open (and rewrites the file atomically). */
  compact(stillOpen: Set<string>) {
    if (!this.file || !existsSync(this.file) || statSync(this.file).size < COMPACT_BYTES) return;
    const kept = this.entries().filter((entry) => stillOpen.has(entry.emailId));
    const temp = `${this.file}.tmp`;
    writeFileSync(temp, kept.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    renameSync(temp, this.file);
  }

  private append(entry: LedgerEntry) {
    if (this.file) appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
    // In memory nothing survives a restart, so there is nothing to publish again: keep the counts only.
    else
      this.memory.push({
        type: entry.type,
        emailId: entry.emailId,
        at: entry.at,
        ...(entry.error ? { error: entry.error } : {}),
      });
  }
}

/**
 * How SES was called over a ledger's entries, as `npm run burst` reports it: what it took and
 * refused, the rate it took them at (recipients per second, from the first acceptance to the last),
 * the most it took within any one second, and the longest stretch during which the rate over the
 * last second stood above `maxSendRate` (and in all).
 */
export function sendingReport(entries: LedgerEntry[], maxSendRate: number) {
  const accepted = entries
    .filter((e) => e.type === 'accepted')
    .map((e) => ({ at: Date.parse(e.at), recipients: e.message?.recipients.length ?? 1 }))
    .sort((a, b) => a.at - b.at);
  const refused: Record<string, number> = {};
  for (const e of entries)
    if (e.type === 'refused') refused[e.error ?? '?'] = (refused[e.error ?? '?'] ?? 0) + 1;
  const recipients = accepted.reduce((sum, a) => sum + a.recipients, 0);
  const first = accepted[0]?.at ?? 0;
  const last = accepted.at(-1)?.at ?? 0;
  // Over every one-second window ending at an acceptance: the recipients taken within it.
  let busiestSecond = 0;
  let aboveMs = 0;
  let longestAboveMs = 0;
  let aboveSince: number | undefined;
  let start = 0;
  let inWindow = 0;
  for (let i = 0; i < accepted.length; i++) {
    const now = accepted[i] as { at: number; recipients: number };
    inWindow += now.recipients;
    while ((accepted[start]?.at ?? now.at) <= now.at - 1000) inWindow -= accepted[start++]?.recipients ?? 0;
    busiestSecond = Math.max(busiestSecond, inWindow);
    const next = accepted[i + 1]?.at ?? now.at;
    if (inWindow > maxSendRate) {
      aboveSince ??= now.at;
      aboveMs += next - now.at;
      longestAboveMs = Math.max(longestAboveMs, next - aboveSince);
    } else aboveSince = undefined;
  }
  const calls = accepted.length + Object.values(refused).reduce((sum, n) => sum + n, 0);
  return {
    accepted: accepted.length,
    recipients,
    refused,
    calls,
    throttled: refused.TooManyRequestsException ?? 0,
    seconds: (last - first) / 1000,
    /** Recipients per second, from the first acceptance to the last (one message at each end). */
    achievedRate:
      last > first ? ((recipients - (accepted.at(-1)?.recipients ?? 0)) * 1000) / (last - first) : 0,
    busiestSecond,
    aboveRateMs: aboveMs,
    longestAboveRateMs: longestAboveMs,
  };
}

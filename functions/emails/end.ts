import { countMetrics } from '../metrics/count.js';
import type { MetricsCounter } from '../metrics/ports.js';
import type { Counters, Log } from '../shared/ports.js';
import type { WebhookEvent } from '../webhooks/model.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import type { BroadcastTally } from './broadcast-tally.js';
import type { EmailContent } from './email.js';
import { type EmailFacts, type EmailSource, emailEvent, emailFacts, sourceOf } from './events.js';
import { ENDINGS, type EndingName } from './lifecycle.js';
import type { EmailRepository, FinishOptions } from './ports.js';
import { recipientsOf } from './recipients.js';
import type { TerminalStatus } from './status.js';
import { talliedEnding, tallyEnding } from './tally.js';

export interface EndDeps {
  emails: Pick<EmailRepository, 'finish'>;
  /** Where webhook events go (absent: none are raised). */
  events?: EventPublisher;
  counters?: Counters;
  /** Where the email metrics are counted (absent: nothing is; metrics/model.ts). */
  metrics?: MetricsCounter;
  /** The broadcasts' tally: an email of a broadcast that ends unsent tells it (absent: nothing is). */
  broadcasts?: BroadcastTally;
  log?: Log;
}

export interface End {
  /** Why it ends (lifecycle.ts ENDINGS): the transition, and what follows. */
  ending: EndingName;
  /** When (ISO UTC). */
  at: string;
  /** The status, where its recipients decide it (a settle); otherwise the ending's. */
  status?: TerminalStatus;
  /** Its `failure_reason` (and the `email.failed` event's). */
  reason?: string;
  /**
   * The email's stored content (its sender for the metric, its facts and recipients for the
   * webhook), or how to read it: read only when a consequence needs it (some endpoint subscribes,
   * or metrics are counted), and once. Absent: its ending needs none of it.
   */
  email?: EmailContent | (() => Promise<EmailContent | null>);
  /** What SES's event says of the email, where that is what ends it (its content is not read). */
  source?: EmailSource;
  /** Whom its webhook names (default: every recipient of its content). */
  recipients?: readonly string[];
  /** The webhook's events, where they are not one `email.failed` (the suppressed, one per reason). */
  webhookEvents?: (facts: EmailFacts) => WebhookEvent[];
  /** How much its counter counts (default 1: the email). */
  count?: number;
  /** The transition's particulars (the attempt it concerns, SES's send, the suppressed recipients). */
  write?: Pick<FinishOptions, 'attemptStartedAt' | 'sent' | 'suppressed' | 'canceled'>;
}

/**
 * Ends an email: one conditional write (its ending's transition: a late, repeated or racing end
 * changes nothing), then, only when that write changed the email, what its ending names: the
 * counter, the email metric and the webhook event. Neither of these fails the end once written:
 * a metric not counted and an event not published are logged and counted (metrics/count.ts,
 * webhooks/publish.ts). Returns whether this write ended it.
 */
export async function endEmail(deps: EndDeps, id: string, end: End): Promise<boolean> {
  const ending = ENDINGS[end.ending];
  const status = end.status ?? ('status' in ending ? ending.status : undefined);
  if (!status) throw new Error(`ending ${end.ending} needs the status its recipients decide`);
  const ended = await deps.emails.finish(id, status, end.at, {
    as: ending.as,
    ...(end.reason ? { reason: end.reason } : {}),
    ...end.write,
  });
  if (!ended) return false;
  if ('counter' in ending) deps.counters?.count(ending.counter, end.count ?? 1);
  if ('failedOnly' in ending && status !== 'failed') return true;
  let read: Promise<EmailContent | null> | undefined;
  const content = () => {
    const given = end.email;
    read ??= typeof given === 'function' ? given() : Promise.resolve(given ?? null);
    return read;
  };
  if ('metric' in ending && deps.metrics) {
    // A sender that cannot be read back is counted under no domain: the count is made, not lost.
    const read = end.source
      ? undefined
      : await content().catch((error) => {
          deps.log?.warn('could not read an ended email back for its sender', { email_id: id, error });
          return null;
        });
    const from = end.source?.from ?? read?.from;
    const broadcastId = end.source ? end.source.broadcast_id : read?.broadcast_id;
    await countMetrics(deps, from, { [ending.metric]: 1 }, id, broadcastId);
  }
  if (deps.broadcasts && talliedEnding(end.ending)) {
    const read = end.source
      ? undefined
      : await content().catch((error) => {
          deps.log?.warn('could not read an ended email back for its broadcast', { email_id: id, error });
          return null;
        });
    await tallyEnding(
      deps,
      {
        broadcastId: end.source ? end.source.broadcast_id : read?.broadcast_id,
        emailId: id,
        address: end.recipients?.[0] ?? (read ? recipientsOf(read)[0]?.email : undefined),
      },
      end.at,
      end.ending,
      Object.keys(end.write?.suppressed?.byReason ?? {}),
    );
  }
  if ('webhook' in ending) {
    const type = ending.webhook;
    // A read that fails fails the publishing, which is logged and counted (webhooks/publish.ts).
    await publishQuietly(deps, type, async () => {
      const found = end.source ? null : await content();
      const source = end.source ?? (found ? sourceOf(found) : undefined);
      if (!source) return [];
      const facts = emailFacts(id, source);
      if (end.webhookEvents) return end.webhookEvents(facts);
      const to = end.recipients ?? (found ? recipientsOf(found).map((r) => r.email) : []);
      return [emailEvent(type, end.at, facts, to, { failed: { reason: end.reason ?? status } })];
    });
  }
  return true;
}

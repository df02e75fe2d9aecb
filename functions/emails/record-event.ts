import { countMetrics, one } from '../metrics/count.js';
import type { MetricCounts } from '../metrics/model.js';
import type { MetricsCounter } from '../metrics/ports.js';
import type { CounterName, Counters, Log } from '../shared/ports.js';
import { newSuppressionId } from '../suppressions/model.js';
import type { SuppressionRepository } from '../suppressions/ports.js';
import type { WebhookEvent, WebhookEventType } from '../webhooks/model.js';
import type { EventPublisher } from '../webhooks/ports.js';
import type { BroadcastTally } from './broadcast-tally.js';
import type { EmailEvent } from './email.js';
import { endEmail } from './end.js';
import type { AutomatedReason } from './engagement.js';
import { type EmailSource, emailEvent, emailFacts } from './events.js';
import type { EmailRepository, RecipientOutcomeFlag, SentMark } from './ports.js';
import { addressKey } from './recipients.js';
import { type DeliveryEventType, lostReason, settledStatus } from './status.js';
import { tallyCounts } from './tally.js';

export interface DeliveryEvent {
  emailId: string;
  type: DeliveryEventType;
  at: string;
  recipients: string[];
  detail?: string;
  /** A bounce's type and subtype (SES: Permanent, Transient or Undetermined, and why). */
  bounce?: { type: string; subType: string };
  /** Every provider event says the provider accepted the email: when, and under which message id. */
  sent: { at: string; providerMessageId: string };
  /** What the provider's event says of the email (for webhooks): the sender, subject and tags. */
  email?: EmailSource;
  /**
   * An open's or click's particulars (Resend's `data.click` for a click: the link, when, by which
   * IP address and user agent); `link` is set for a click only.
   */
  engagement?: { ipAddress: string; userAgent: string; timestamp: string; link?: string };
  /** Why an open or click looks made by a machine (engagement.ts). */
  automated?: AutomatedReason;
}

/** The counter of each kind of event (one metric each, see ports.ts). */
const EVENT_COUNTERS: Record<DeliveryEventType, CounterName> = {
  sent: 'EventsSent',
  delivered: 'EventsDelivered',
  bounced: 'EventsBounced',
  complained: 'EventsComplained',
  delayed: 'EventsDelayed',
  failed: 'EventsFailed',
  opened: 'EventsOpened',
  clicked: 'EventsClicked',
};

export interface RecordEventDeps {
  emails: EmailRepository;
  /** Where hard-bounced and complaining addresses go (absent: nothing is added). */
  suppressions?: Pick<SuppressionRepository, 'add'>;
  /** Where webhook events go (absent: none are raised). */
  events?: EventPublisher;
  counters?: Counters;
  /** Where the email metrics are counted (absent: nothing is; metrics/model.ts). */
  metrics?: MetricsCounter;
  /** A broadcast's tally: its emails' outcomes, opens and clicks (absent: nothing is raised; tally.ts). */
  broadcasts?: BroadcastTally;
  log?: Log;
}

/** The webhook event type of each provider event. */
const WEBHOOK_TYPES: Record<DeliveryEvent['type'], WebhookEventType> = {
  sent: 'email.sent',
  delivered: 'email.delivered',
  bounced: 'email.bounced',
  complained: 'email.complained',
  delayed: 'email.delivery_delayed',
  failed: 'email.failed',
  opened: 'email.opened',
  clicked: 'email.clicked',
};

/**
 * Publishes the event to the webhooks subscribed to it, after the email's state is recorded (a
 * receiver that reads the email back sees what the event says). Publishing the same provider event
 * again gives the same message ids, so a retried record is deduplicated by receivers; a failure to
 * publish fails the record, which is retried.
 */
async function raise(deps: RecordEventDeps, event: DeliveryEvent, types: WebhookEventType[]) {
  const { events } = deps;
  if (!events) return;
  const now = await events.subscriptions();
  const built: WebhookEvent[] = [];
  const facts = emailFacts(
    event.emailId,
    event.email ?? { from: '', subject: '', tags: {} },
    event.sent.providerMessageId,
  );
  for (const type of types) {
    if (!now.wants(type)) continue;
    if (type === 'email.sent') {
      built.push(emailEvent(type, event.sent.at, facts, event.recipients));
      continue;
    }
    const detail: Record<string, unknown> =
      type === 'email.bounced'
        ? {
            bounce: {
              type: event.bounce?.type ?? 'Undetermined',
              subType: event.bounce?.subType ?? 'Undetermined',
              message: event.detail ?? '',
            },
          }
        : type === 'email.failed'
          ? { failed: { reason: event.detail ?? 'failed' } }
          : type === 'email.clicked'
            ? { click: clickOf(event) }
            : {};
    // Ours, beside Resend's fields: why an open or click looks made by a machine (engagement.ts).
    if (event.automated && (type === 'email.opened' || type === 'email.clicked'))
      detail.automated = event.automated;
    const one = emailEvent(
      type as Extract<WebhookEventType, `email.${string}`>,
      event.at,
      facts,
      event.recipients,
      detail,
    );
    // Two opens or clicks of the same moment (two links, a reader and a proxy) are two messages.
    if (event.engagement && (type === 'email.opened' || type === 'email.clicked')) {
      const { link = '', userAgent, ipAddress } = event.engagement;
      one.key += `|${link}|${userAgent}|${ipAddress}`;
    }
    built.push(one);
  }
  if (built.length) await now.publish(built);
}

/** Resend's `data.click` of an `email.clicked` payload. */
const clickOf = (event: DeliveryEvent) => ({
  ipAddress: event.engagement?.ipAddress ?? '',
  link: event.engagement?.link ?? '',
  timestamp: event.engagement?.timestamp ?? event.at,
  userAgent: event.engagement?.userAgent ?? '',
});

/** What an open or click keeps of its particulars on the email's event (bounded, see addEvent). */
function engagementEntry(entry: EmailEvent, event: DeliveryEvent): void {
  const { engagement } = event;
  if (engagement?.link) entry.detail = engagement.link.slice(0, MAX_LINK_CHARS);
  if (engagement?.userAgent) entry.user_agent = engagement.userAgent.slice(0, MAX_USER_AGENT_CHARS);
  if (engagement?.ipAddress) entry.ip_address = engagement.ipAddress.slice(0, 45);
  if (event.automated) entry.automated = event.automated;
}
/** The longest link and user agent an event item keeps (the webhook carries them whole). */
const MAX_LINK_CHARS = 2000;
const MAX_USER_AGENT_CHARS = 300;

/**
 * Applies a provider event.
 * - `sent`: records that the provider accepted the email. This is what settles an attempt whose
 *   worker died or timed out after the provider took it, so it is never sent again.
 * - `delivered`, `bounced`, `complained`: a final outcome for the recipients it names, each counted
 *   once (see EmailRepository.settleRecipients); once every recipient has one, the email settles:
 *   `bounced` if any did not get it, else `delivered` (status.ts, settledStatus). The same events
 *   in any order, duplicated or late, settle it the same way. A permanent bounce or a complaint
 *   also puts the address on the suppression list (kept as first added).
 * - `delayed`: marks the email (for `last_event`); `failed`: SES refused the whole email.
 * - `opened`, `clicked`: recorded as events and marks on the email (for `last_event`), counted, and
 *   raised as `email.opened` / `email.clicked`, flagged when a machine likely made them; they never
 *   settle an email nor change its status, nor count as a recipient's outcome.
 */
export async function recordDeliveryEvent(
  deps: RecordEventDeps,
  event: DeliveryEvent,
): Promise<{ statusChanged: boolean }> {
  deps.counters?.count(EVENT_COUNTERS[event.type]);
  // Each write, then what it recorded first counted at once (metrics/model.ts: a repeated or late
  // event finds it recorded and counts nothing; the writes after it may fail, and the retried event
  // then finds it recorded), then every webhook the writes made news of, once they are all done (a
  // receiver that reads the email back sees what the event says).
  let statusChanged = false;
  const raised: WebhookEventType[] = [];
  for (const write of writesOf(deps, event)) {
    const news = await write();
    if (news.counts) {
      await countMetrics(deps, event.email?.from, news.counts, event.emailId, event.email?.broadcast_id);
      // The broadcast's tally, from the same news (its email's one recipient).
      await tallyCounts(
        deps,
        { broadcastId: event.email?.broadcast_id, emailId: event.emailId, address: event.recipients[0] },
        event.at,
        news.counts,
        { bounceType: event.bounce?.type, link: event.engagement?.link },
      );
    }
    raised.push(...(news.raise ?? []));
    statusChanged ||= news.statusChanged === true;
  }
  if (raised.length) await raise(deps, event, raised);
  return { statusChanged };
}

/** What one write of an event recorded first: the metrics it counts, the webhooks it raises. */
interface News {
  counts?: MetricCounts;
  raise?: WebhookEventType[];
  statusChanged?: boolean;
}

/** An event's writes, in order (recordDeliveryEvent performs them and what follows each). */
function writesOf(deps: RecordEventDeps, event: DeliveryEvent): (() => Promise<News>)[] {
  const { emails } = deps;
  const { emailId, sent } = event;
  const type = WEBHOOK_TYPES[event.type];
  const entry = entryOf(event);
  /** The send every event implies (SES has the email), with the mark it sets on the status item. */
  const recordSend =
    (mark?: SentMark, counted?: 'unique_opened' | 'unique_clicked' | 'delivery_delayed') =>
    async (): Promise<News> => {
      const news = await emails.recordSent(emailId, sent.providerMessageId, sent.at, mark);
      // email.sent is raised once, by whichever records the send first: the consumer, or this.
      return {
        counts: { sent: one(news.first), ...(counted ? { [counted]: one(news.newMark) } : {}) },
        raise: news.first ? ['email.sent'] : [],
      };
    };
  /** The event kept on the email; an open or click is counted as soon as it is stored. */
  const keep = (counted?: 'opened' | 'clicked') => async (): Promise<News> => {
    const added = await emails.addEvent(emailId, entry);
    if (counted && event.automated) deps.counters?.count('EventsAutomated');
    return counted ? { counts: { [counted]: one(added) } } : {};
  };
  const suppress = async (): Promise<News> => {
    await suppressAddresses(deps, event);
    return {};
  };
  const raises = async (): Promise<News> => ({ raise: [type] });
  switch (event.type) {
    case 'sent':
      return [recordSend()];
    case 'opened':
    case 'clicked': {
      const kind = event.type;
      // An open or click also means the provider has the email; the mark never touches the status.
      return [keep(kind), suppress, recordSend(kind, `unique_${kind}`), raises];
    }
    case 'delayed':
      // A delay also means the provider has the email.
      return [keep(), suppress, recordSend('delayed', 'delivery_delayed'), raises];
    case 'failed':
      return [
        keep(),
        suppress,
        async () => ({
          statusChanged: await endEmail(deps, emailId, {
            ending: 'providerFailed',
            at: event.at,
            ...(event.detail ? { reason: event.detail } : {}),
            ...(event.email ? { source: event.email } : {}),
            write: { sent },
          }),
        }),
        raises,
      ];
    default: {
      let settled: Awaited<ReturnType<EmailRepository['settleRecipients']>> = null;
      return [
        suppress,
        async () => {
          settled = await emails.settleRecipients(emailId, {
            addresses: event.recipients,
            outcome: event.type as RecipientOutcomeFlag,
            at: event.at,
            ...(event.detail ? { reason: event.detail } : {}),
            sent,
            event: entry,
          });
          if (!settled) return {};
          return {
            counts: outcomeCounts(settled.newly, event.bounce?.type),
            raise: [type],
            statusChanged: settled.changed,
          };
        },
        // Every recipient has an outcome, and the write that recorded the last did not settle the
        // email (it has more than one recipient): it settles now.
        async () => {
          const next =
            settled && !settled.changed && settled.status === 'queued'
              ? settledStatus(settled.tally)
              : undefined;
          if (!settled || !next) return {};
          return {
            statusChanged: await endEmail(deps, emailId, {
              ending: 'settled',
              status: next,
              at: event.at,
              ...(next === 'bounced' ? { reason: lostReason(settled.tally) } : {}),
              write: { sent },
            }),
          };
        },
      ];
    }
  }
}

/** The event as the email keeps it. */
function entryOf(event: DeliveryEvent): EmailEvent {
  const entry: EmailEvent = { type: event.type, at: event.at, recipients: event.recipients };
  if (event.detail) entry.detail = event.detail;
  if (event.bounce) entry.bounce = event.bounce;
  if (event.type === 'opened' || event.type === 'clicked') engagementEntry(entry, event);
  return entry;
}

/**
 * Applies a batch of provider events (as SQS hands them over), each as `recordDeliveryEvent` does:
 * the emails side by side, each email's own events in turn, its Send event first. Every email the
 * provider accepted has a `sent` event, and nearly always the consumer has recorded the send
 * already (it has SES's answer): the states of the batch's `sent` events are read in one batch
 * read, and those already recorded cost no write. (Read a moment
 * after the consumer's write, a state may not show it yet: that event is applied as usual, which
 * changes nothing.) Returns, per event, whether it is done; an event whose record failed is
 * retried by itself.
 */
export async function recordDeliveryEvents(
  deps: RecordEventDeps,
  events: DeliveryEvent[],
  onDone?: (event: DeliveryEvent, outcome: { statusChanged: boolean; skipped?: boolean }) => void,
): Promise<boolean[]> {
  const sentIds = [...new Set(events.filter((e) => e.type === 'sent').map((e) => e.emailId))];
  const recorded = new Set<string>();
  if (sentIds.length) {
    try {
      for (const state of await deps.emails.states(sentIds)) if (state.sent_at) recorded.add(state.id);
    } catch (error) {
      // Without the read, each event is applied as it comes (the write changes nothing if recorded).
      deps.log?.warn('could not read the states of sent events; applying them one by one', { error });
    }
  }
  const apply = async (event: DeliveryEvent) => {
    if (event.type === 'sent' && recorded.has(event.emailId)) {
      deps.counters?.count(EVENT_COUNTERS.sent);
      onDone?.(event, { statusChanged: false, skipped: true });
      return true;
    }
    try {
      const outcome = await recordDeliveryEvent(deps, event);
      onDone?.(event, outcome);
      return true;
    } catch (error) {
      deps.log?.error('ses event failed', { email_id: event.emailId, type: event.type, error });
      return false;
    }
  };
  // Emails side by side; one email's events one after the other, its Send event first, so the
  // write that records the send (and raises email.sent) is the Send event's, not a delivery's.
  const byEmail = new Map<string, number[]>();
  events.forEach((event, i) => {
    const positions = byEmail.get(event.emailId) ?? [];
    if (event.type === 'sent') positions.unshift(i);
    else positions.push(i);
    byEmail.set(event.emailId, positions);
  });
  const done: boolean[] = new Array(events.length).fill(false);
  await Promise.all(
    [...byEmail.values()].map(async (positions) => {
      for (const i of positions) done[i] = await apply(events[i] as DeliveryEvent);
    }),
  );
  return done;
}

/** The outcome metrics of the flags a settle set first; a bounce also by its type. */
function outcomeCounts(newly: readonly string[], bounceType: string | undefined): MetricCounts {
  const counts: MetricCounts = {};
  for (const flag of newly) counts[flag as 'delivered' | 'bounced' | 'complained'] = 1;
  if (counts.bounced) {
    const type =
      bounceType === 'Permanent' ? 'permanent' : bounceType === 'Transient' ? 'transient' : 'undetermined';
    counts[`bounced_${type}`] = 1;
  }
  return counts;
}

/** Puts a hard-bounced or complaining address on the suppression list (a transient bounce is not). */
async function suppressAddresses({ suppressions, counters, log }: RecordEventDeps, event: DeliveryEvent) {
  const origin =
    event.type === 'complained'
      ? 'complaint'
      : event.type === 'bounced' && event.bounce?.type === 'Permanent'
        ? 'bounce'
        : undefined;
  if (!suppressions || !origin) return;
  const results = await Promise.all(
    [...new Set(event.recipients.map(addressKey))].map((email) =>
      suppressions.add({
        id: newSuppressionId(),
        email,
        origin,
        source_id: event.emailId,
        created_at: event.at,
      }),
    ),
  );
  const added = results.filter((r) => r.added).length;
  if (added) {
    counters?.count('SuppressionsAdded', added);
    log?.info('added to the suppression list', { email_id: event.emailId, origin, count: added });
  }
}

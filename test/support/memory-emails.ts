import type { EmailEvent } from '../../functions/emails/email.js';
import { allows } from '../../functions/emails/lifecycle.js';
import type {
  EmailRepository,
  FinishOptions,
  RecipientNews,
  RecipientOutcomeFlag,
  SentMark,
} from '../../functions/emails/ports.js';
import { positionsOf, type Recipient } from '../../functions/emails/recipients.js';
import {
  type EmailStatus,
  type EventMarks,
  settledStatus,
  type TerminalStatus,
} from '../../functions/emails/status.js';

/**
 * The part of EmailRepository the events consumer uses, in memory, with the contract the DynamoDB
 * adapter keeps (see ports.ts): outcomes as sets of positions, forward-only status, a one-recipient
 * email settled in the same change. For tests that run thousands of event orders; the same orders,
 * sampled, run against the real adapter in test/integration/recipient-outcomes.test.ts.
 */
export class MemoryEmails
  implements Pick<EmailRepository, 'addEvent' | 'markSent' | 'recordSent' | 'finish' | 'settleRecipients'>
{
  status: EmailStatus = 'queued';
  reason?: string;
  readonly done = new Set<number>();
  readonly lost = new Set<number>();
  readonly flags = new Set<string>();
  readonly events = new Map<string, EmailEvent>();
  sentAt?: string;

  constructor(readonly recipients: Recipient[]) {}

  async addEvent(_id: string, event: EmailEvent) {
    const key = JSON.stringify([
      event.at,
      event.type,
      [...event.recipients].sort(),
      event.detail,
      event.user_agent,
      event.ip_address,
    ]);
    const fresh = !this.events.has(key);
    this.events.set(key, event);
    return fresh;
  }

  async markSent(id: string, mid: string, at: string, mark?: SentMark) {
    return (await this.recordSent(id, mid, at, mark)).first;
  }

  async recordSent(_id: string, _mid: string, at: string, mark?: SentMark) {
    const first = this.sentAt === undefined;
    const newMark = mark !== undefined && !this.flags.has(mark);
    this.sentAt ??= at;
    if (mark) this.flags.add(mark);
    return { first, newMark };
  }

  async finish(id: string, status: TerminalStatus, at: string, options: FinishOptions = {}) {
    const state = {
      id,
      status: this.status,
      created_at: at,
      ...(this.sentAt ? { sent_at: this.sentAt } : {}),
    };
    const context = { nowMs: Date.parse(at), attemptStartedAt: options.attemptStartedAt };
    if (!allows(state, options.as ?? 'settleEvent', context)) return false;
    this.status = status;
    if (options.reason) this.reason = options.reason;
    if (options.sent) this.sentAt ??= options.sent.at;
    return true;
  }

  /** What the status item's marks say, as lastEventOf reads them. */
  marks(): EventMarks {
    const has = (flag: string) => this.flags.has(flag);
    return {
      status: this.status,
      sent: Boolean(this.sentAt),
      delayed: has('delayed'),
      complained: has('complained'),
      delivered: has('delivered'),
      bounced: has('bounced'),
      opened: has('opened'),
      clicked: has('clicked'),
    };
  }

  private tally() {
    return { total: this.recipients.length, done: this.done.size, lost: this.lost.size };
  }

  async settleRecipients(id: string, news: RecipientNews) {
    await this.addEvent(id, news.event);
    this.sentAt ??= news.sent.at;
    const setting: RecipientOutcomeFlag[] =
      news.outcome === 'complained'
        ? ['complained', 'delivered']
        : news.outcome === 'failed'
          ? []
          : [news.outcome];
    const newly = setting.filter((flag) => !this.flags.has(flag));
    for (const flag of setting) this.flags.add(flag);
    const lost = news.outcome === 'bounced' || news.outcome === 'failed';
    if (this.recipients.length === 1 && this.status === 'queued') {
      this.done.add(0);
      if (lost) this.lost.add(0);
      this.status = settledStatus(this.tally()) as TerminalStatus;
      if (lost && news.reason) this.reason = news.reason;
      return { status: this.status, tally: this.tally(), changed: true, newly };
    }
    for (const position of positionsOf(this.recipients, news.addresses)) {
      this.done.add(position);
      if (lost) this.lost.add(position);
    }
    return { status: this.status, tally: this.tally(), changed: false, newly };
  }
}

import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EmailEvent } from '../../emails/email.js';
import type { Transition, TransitionContext } from '../../emails/lifecycle.js';
import type {
  ClaimOptions,
  ClaimResult,
  EmailRepository,
  FinishOptions,
  RecipientNews,
  RecipientOutcomeFlag,
  SentMark,
  SentNews,
  StandingClaim,
  SuppressedRecipients,
} from '../../emails/ports.js';
import { positionsOf, recipientsOf } from '../../emails/recipients.js';
import {
  type EmailStatus,
  type RecipientTally,
  settledStatus,
  type TerminalStatus,
} from '../../emails/status.js';
import { attributesIf, queryPages, writeIf } from './client.js';
import { conditionOf, withCondition } from './email-conditions.js';
import {
  bounded,
  eventKey,
  INLINE_EVENT,
  INLINE_EVENT_MAX_BYTES,
  suppressedMarks,
  tallyOf,
  toState,
} from './email-items.js';
import { EmailKeys } from './email-keys.js';
import { DynamoEmailStore } from './email-store.js';
import { INDEXES, keys } from './table.js';

type Item = Record<string, unknown>;

/** The status item after an update (DynamoEmailRepository.update) made of the item before it. */
function applied(before: Item, change: { set: Item; add: Record<string, number[]> }): Item {
  const after: Item = { ...before };
  for (const [name, value] of Object.entries(change.set)) {
    const attr = name.startsWith('#') ? name.slice(1) : name;
    if (Array.isArray(value) && value[0] === 'if_not_exists') after[attr] = before[attr] ?? value[1];
    else after[attr] = value;
  }
  for (const [name, positions] of Object.entries(change.add))
    after[name] = new Set([...((before[name] as Set<number> | undefined) ?? []), ...positions]);
  return after;
}

/** The outcome flags this change sets that were not set before. */
const newFlags = (before: Item, flags: Item): RecipientOutcomeFlag[] =>
  (['delivered', 'bounced', 'complained'] as const).filter((f) => flags[f] === true && before[f] !== true);

/** The due index's keys on a status item: a write that sends or ends an email removes them. */
const DUE_KEYS = EmailKeys.dueKeys;

/**
 * Emails in the single table: stored and read as email-store.ts does, and every change of the
 * status item after that a transition of the lifecycle (emails/lifecycle.ts), written with that
 * transition's condition (email-conditions.ts).
 */
export class DynamoEmailRepository extends DynamoEmailStore implements EmailRepository {
  async claim(
    id: string,
    nowMs: number,
    suppressed?: SuppressedRecipients,
    options: ClaimOptions = {},
  ): Promise<ClaimResult> {
    const marks = suppressedMarks(suppressed);
    // This claim's own mark. If DynamoDB applies the write but its answer is lost, the SDK's retry
    // finds the email claimed; the mark tells that claim is this one, so the email is still sent.
    const token = options.mark ?? randomBytes(9).toString('base64url');
    // The recipients left out are settled in the same write: the claim and they stand together.
    // No expiry: once an attempt began, no other is ever started (see emails/deliver.ts). A
    // scheduled email only once it is due: a reschedule or cancel and this claim are transitions
    // of the same item, so exactly one of them happens.
    // A claim released after a throttle leaves its suppressed marks, and the next claim writes the
    // same again: the marks are this claim's news only when none were there before (its old
    // suppressed_at absent), or, after a lost answer, when the time kept is this claim's own.
    const write = {
      update: `SET send_started_at = :now, claim = :token${marks.set}${marks.add}`,
      values: { ':now': nowMs, ':token': token, ...marks.values },
      ...(suppressed && marks.set ? { returnValues: 'UPDATED_OLD' as const } : {}),
    };
    const claimedWith = (newMarks: boolean) =>
      suppressed && marks.set && newMarks ? ('claimed_suppressed' as const) : ('claimed' as const);
    const claimed = await this.transition(id, 'claim', { nowMs }, write);
    if (claimed) return claimedWith(claimed.suppressed_at === undefined);
    // Rare path (a duplicate message, or a retry after a lost answer): read why it was refused.
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.statusKey(id), ConsistentRead: true }),
    );
    if (Item?.claim === token) return claimedWith(Item.suppressed_at === suppressed?.at);
    const state = Item ? toState(id, Item) : null;
    if (!state) return 'missing';
    if (state.status !== 'queued' || state.sent_at) return 'done';
    if (state.send_started_at !== undefined) return 'in_progress';
    if (state.scheduled_at && Date.parse(state.scheduled_at) > nowMs) return 'not_due';
    return 'in_progress';
  }

  async release(id: string, startedAtMs: number, nowMs: number): Promise<void> {
    // When it was refused: its message is retried from then on, so the sweeper waits from then.
    await this.transition(
      id,
      'release',
      { attemptStartedAt: startedAtMs },
      {
        update: 'SET refused_at = :now REMOVE send_started_at, claim, attempt_error',
        values: { ':now': nowMs },
      },
    );
  }

  async releaseStanding(id: string, claim: StandingClaim, nowMs: number): Promise<boolean> {
    // Exactly that claim (its time and its mark), with the same change as its worker's release.
    const context = { attemptStartedAt: claim.started_at, claimMark: claim.mark };
    const change = {
      update: 'SET refused_at = :now REMOVE send_started_at, claim, attempt_error',
      values: { ':now': nowMs },
    };
    return (await this.transition(id, 'releaseStanding', context, change)) !== null;
  }

  async markDeferred(id: string, nowMs: number): Promise<void> {
    // The sweeper waits from the last refusal before it takes an unsent email for stranded.
    await this.transition(id, 'defer', {}, { update: 'SET refused_at = :now', values: { ':now': nowMs } });
  }

  async markSent(id: string, providerMessageId: string, at: string, mark?: SentMark): Promise<boolean> {
    return (await this.recordSent(id, providerMessageId, at, mark)).first;
  }

  async recordSent(id: string, providerMessageId: string, at: string, mark?: SentMark): Promise<SentNews> {
    // In the same write: a delay, complaint, open or click costs nothing more than recording the
    // email as sent, and never touches its status.
    // A flag, not a time: last_event needs only whether it happened, and the status item stays small.
    const marked = mark ? `, ${mark} = :true` : '';
    // This write's own mark, kept with the first record: if DynamoDB applies the write but its
    // answer is lost, the SDK's retry finds the send recorded, and the mark tells it was this write
    // (while a duplicated Send event, with the same time and message id, is another write).
    const token = randomBytes(9).toString('base64url');
    // The consumer and the provider's Send event both record it; the first record stands. The old
    // sent_at (and mark) come back only if there were: absent, this write recorded them first.
    const old = await this.transition(
      id,
      'markSent',
      {},
      {
        update:
          'SET sent_at = if_not_exists(sent_at, :at), provider_message_id = if_not_exists(provider_message_id, :mid), ' +
          `sent_by = if_not_exists(sent_by, :token)${marked} REMOVE attempt_error, claim, ${DUE_KEYS}`,
        values: {
          ':at': at,
          ':mid': providerMessageId,
          ':token': token,
          ...(mark ? { ':true': true } : {}),
        },
        returnValues: 'UPDATED_OLD',
      },
    );
    // No such email (it expired): nothing recorded. The send is news (raised, and counted) when
    // this write recorded it: none before, or this write's own found by the SDK's retry.
    if (!old) return { first: false, newMark: false };
    const first = old.sent_at === undefined || old.sent_by === token;
    // A mark found set by this write's own first try is not told apart (a unique open or click,
    // or a delay, then goes uncounted: rare).
    const newMark = mark !== undefined && old[mark] !== true;
    return { first, newMark };
  }

  async markUnknown(id: string, reason: string): Promise<void> {
    await this.transition(
      id,
      'markUnknown',
      {},
      {
        update: 'SET attempt_error = :reason',
        values: { ':reason': bounded(reason) },
      },
    );
  }

  async finish(
    id: string,
    status: TerminalStatus,
    at: string,
    options: FinishOptions = {},
  ): Promise<boolean> {
    const { reason, sent, suppressed } = options;
    const as = options.as ?? 'settleEvent';
    const canceled = as === 'cancel' || options.canceled === true;
    const set = ['#status = :status', '#statusPk = :statusPk', 'finished_at = :at'];
    if (canceled) set.push('canceled = :true');
    const marks = suppressedMarks(suppressed);
    const values: Item = {
      ':status': status,
      ':statusPk': this.keys.withStatus(id, status),
      ':at': at,
      ...(canceled ? { ':true': true } : {}),
      ...marks.values,
    };
    if (reason) {
      set.push('failure_reason = :reason');
      // Bounded so the status item stays small (one write unit per status change).
      values[':reason'] = bounded(reason);
    }
    if (sent) {
      set.push(
        'sent_at = if_not_exists(sent_at, :sentAt)',
        'provider_message_id = if_not_exists(provider_message_id, :mid)',
      );
      values[':sentAt'] = sent.at;
      values[':mid'] = sent.providerMessageId;
    }
    // Forward only (every final transition requires `queued`): a late or repeated event finds the
    // email already final and changes nothing. A final email leaves the due index in the same write.
    const done = await this.transition(
      id,
      as,
      { nowMs: Date.parse(at), attemptStartedAt: options.attemptStartedAt },
      {
        update: `SET ${set.join(', ')}${marks.set}${marks.add} REMOVE ${DUE_KEYS}`,
        names: { '#statusPk': INDEXES.emailsByStatus.partitionKey },
        values,
      },
    );
    return done !== null;
  }

  /**
   * One write of the email's status item as a transition of its lifecycle, conditional on what the
   * transition requires (emails/lifecycle.ts): the attributes it returns ({} unless asked), or null
   * when the lifecycle did not allow it.
   */
  private transition(
    id: string,
    transition: Transition,
    context: TransitionContext,
    change: {
      update: string;
      names?: Record<string, string>;
      values?: Item;
      returnValues?: 'UPDATED_OLD' | 'ALL_NEW' | 'ALL_OLD';
    },
  ): Promise<Item | null> {
    return attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.statusKey(id),
        UpdateExpression: change.update,
        ...withCondition(conditionOf(transition, context), { names: change.names, values: change.values }),
        ...(change.returnValues ? { ReturnValues: change.returnValues } : {}),
      }),
    );
  }

  async addEvent(id: string, event: EmailEvent): Promise<boolean> {
    const { Attributes } = await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        // Derived from the whole event: a redelivered event overwrites itself, while two events of
        // one type in the same millisecond (for different recipients) are two items.
        Item: { pk: keys.email(id), sk: eventKey(event), ...event, ...this.keys.eventExpiry(event.at) },
        // The item it replaced, if any (no extra cost): absent, this is the event's first record.
        ReturnValues: 'ALL_OLD',
      }),
    );
    return Attributes === undefined;
  }

  async settleRecipients(
    id: string,
    news: RecipientNews,
  ): Promise<{
    status: EmailStatus;
    tally: RecipientTally;
    changed: boolean;
    newly: RecipientOutcomeFlag[];
  } | null> {
    // A recipient whose own message SES never took (failed) did not get the email, as a bounce; it
    // sets no flag of its own (its event says it).
    const lost = news.outcome === 'bounced' || news.outcome === 'failed';
    const flags = (news.outcome === 'failed' ? {} : { [news.outcome]: true }) as Item;
    if (news.outcome === 'complained') flags.delivered = true;
    // The common case first: a queued email with one recipient is settled by this news alone, in
    // one write, its event kept on the status item (a small one: an item of its own otherwise,
    // written first, so the email never shows an outcome without its event). The condition fails
    // for anything else (several recipients, already final, an email stored before recipients were
    // counted), which takes the general path.
    const inline = Buffer.byteLength(JSON.stringify(news.event)) <= INLINE_EVENT_MAX_BYTES;
    if (!inline) await this.addEvent(id, news.event);
    const single = settledStatus({ total: 1, done: 1, lost: lost ? 1 : 0 }) as TerminalStatus;
    const settled = await this.update(
      id,
      {
        set: {
          ...flags,
          '#status': single,
          [INDEXES.emailsByStatus.partitionKey]: this.keys.withStatus(id, single),
          finished_at: news.at,
          ...(lost && news.reason ? { failure_reason: bounded(news.reason) } : {}),
          ...(inline ? { [INLINE_EVENT]: news.event } : {}),
        },
        add: { done: [0], ...(lost ? { lost: [0] } : {}) },
        sent: news.sent,
      },
      'settleSingle',
    );
    if (settled)
      return {
        status: single,
        tally: tallyOf(settled.after),
        changed: true,
        newly: newFlags(settled.before, flags),
      };
    if (inline) await this.addEvent(id, news.event);

    // The general path: which positions the news concerns, from the email's recipients (immutable).
    const { Item: summary } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.summary },
        ProjectionExpression: '#to, cc, bcc',
        ExpressionAttributeNames: { '#to': 'to' },
      }),
    );
    if (!summary) return null;
    const recipients = recipientsOf({
      to: (summary.to as string[] | undefined) ?? [],
      cc: (summary.cc as string[] | undefined) ?? [],
      bcc: (summary.bcc as string[] | undefined) ?? [],
    });
    const positions = positionsOf(recipients, news.addresses);
    const after = await this.update(
      id,
      {
        set: { ...flags, rcpts: ['if_not_exists', recipients.length] },
        add: positions.length ? { done: positions, ...(lost ? { lost: positions } : {}) } : {},
        sent: news.sent,
      },
      'recordOutcomes',
    );
    if (!after) return null;
    return {
      status: after.after.status as EmailStatus,
      tally: tallyOf(after.after),
      changed: false,
      newly: newFlags(after.before, flags),
    };
  }

  /**
   * A recipients' transition of the status item: `set` values (a `['if_not_exists', v]` keeps what
   * is there), `add` positions to number sets, `sent` filled in if absent; the item before it and
   * after it, or null when the lifecycle did not allow it. (DynamoDB returns one of the two: the
   * item before, from which the one after follows; what was before tells which flags are news.)
   */
  private async update(
    id: string,
    change: { set: Item; add: Record<string, number[]>; sent?: { at: string; providerMessageId: string } },
    transition: Transition,
  ): Promise<{ before: Item; after: Item } | null> {
    const names: Record<string, string> = {};
    const values: Item = {};
    const set: string[] = [];
    let n = 0;
    for (const [name, value] of Object.entries(change.set)) {
      const attr = name.startsWith('#') ? name : `#a${n}`;
      names[attr] = name.startsWith('#') ? name.slice(1) : name;
      const v = `:v${n++}`;
      if (Array.isArray(value) && value[0] === 'if_not_exists') {
        set.push(`${attr} = if_not_exists(${attr}, ${v})`);
        values[v] = value[1];
      } else {
        set.push(`${attr} = ${v}`);
        values[v] = value;
      }
    }
    if (change.sent) {
      set.push(
        'sent_at = if_not_exists(sent_at, :sentAt)',
        'provider_message_id = if_not_exists(provider_message_id, :mid)',
      );
      values[':sentAt'] = change.sent.at;
      values[':mid'] = change.sent.providerMessageId;
    }
    const add = Object.entries(change.add).map(([name, positions]) => {
      values[`:${name}`] = new Set(positions);
      return `${name} :${name}`;
    });
    const before = await this.transition(
      id,
      transition,
      {},
      {
        // Sent or final: out of the due index (removing absent keys costs nothing).
        update: `SET ${set.join(', ')}${add.length ? ` ADD ${add.join(', ')}` : ''} REMOVE ${DUE_KEYS}`,
        names,
        values,
        returnValues: 'ALL_OLD',
      },
    );
    return before && { before, after: applied(before, change) };
  }

  async reschedule(
    id: string,
    scheduledAt: string,
    dispatched: boolean,
    options: { unmark?: boolean } = {},
  ): Promise<boolean> {
    // A new time is never before the email was created, so it alone sets the expiry.
    const [ttl] = Object.entries(this.keys.expiry(scheduledAt, scheduledAt));
    const due = Object.entries(this.keys.due(id, scheduledAt));
    // Only while it waits: not yet claimed by the consumer, not sent, not final (canceled).
    const moved = await this.transition(
      id,
      'reschedule',
      {},
      {
        update: `SET scheduled_at = :at, ${due.map(([name]) => `${name} = :${name}`).join(', ')}${
          ttl ? ', #ttl = :ttl' : ''
        }${dispatched ? ', dispatched = :at' : ' REMOVE dispatched'}`,
        names: ttl ? { '#ttl': ttl[0] } : {},
        values: {
          ':at': scheduledAt,
          ...Object.fromEntries(due.map(([name, value]) => [`:${name}`, value])),
          ...(ttl ? { ':ttl': ttl[1] } : {}),
        },
        returnValues: 'UPDATED_OLD',
      },
    );
    if (!moved) return false;
    // Then its content's expiry: the email outlives its new time, all of it. (Should this write
    // fail, the content keeps its earlier expiry; a retried reschedule sets it.)
    // Its search items too, even when the status item's expiry did not move: a retry finds it
    // already moved by the first try, whose extension of the rest may have failed. Only the send
    // path's unmarking (its own time again: nothing moves) reads none of them, with no Query grant.
    if (ttl) await this.extendContent(id, ttl[0], ttl[1], !options.unmark);
    return true;
  }

  /**
   * Moves the expiry of an email's summary, body and search items later, never earlier (two reschedules at
   * once: the later time stands); absent items are left absent.
   */
  private async extendContent(id: string, attribute: string, value: unknown, search: boolean): Promise<void> {
    // Its search items too (email-keys.ts, "Search"): by their keys, a small Query.
    const searchSks: string[] = [];
    if (search)
      for await (const page of queryPages(this.db, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :search)',
        ExpressionAttributeValues: { ':pk': keys.email(id), ':search': EmailKeys.searchItemPrefix },
        ProjectionExpression: 'sk',
      }))
        searchSks.push(...page.map((item) => String(item.sk)));
    await Promise.all(
      [keys.summary, keys.body, ...searchSks].map((sk) =>
        writeIf(
          this.db,
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: keys.email(id), sk },
            UpdateExpression: 'SET #ttl = :ttl',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#ttl) OR #ttl < :ttl)',
            ExpressionAttributeNames: { '#ttl': attribute },
            ExpressionAttributeValues: { ':ttl': value },
          }),
        ),
      ),
    );
  }
}

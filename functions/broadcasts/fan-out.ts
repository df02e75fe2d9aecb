import type { Contact, Topic } from '../contacts/contact.js';
import type { EmailContent } from '../emails/content.js';
import type { DueJob, NewEmail, SendJob } from '../emails/ports.js';
import { dueJob } from '../emails/schedule.js';
import { MAX_DEFER_MS } from '../shared/pacing.js';
import type { Broadcast, BroadcastTotals, FanOutProgress } from './broadcast.js';
import { broadcastEmailId } from './email-ids.js';
import type { FanOutDeps, SegmentMember } from './fan-out-ports.js';
import { renderForContact } from './merge-tags.js';

/**
 * One step of a broadcast's fan-out (the `fan-out-broadcast` worker, one fan-out queue message a
 * step, `{broadcast_id, generation}`), off the request path. A step takes pages of the segment's
 * members from the checkpoint (`fanout.cursor`, oldest contact id first), makes one email per
 * contact sent to (rendered for it, its own unsubscribe link), queues them on the broadcast lane,
 * then moves the checkpoint in one write conditioned on the page it began from. The email ids are
 * derived from (broadcast, contact, the fan-out's start `members_before`), never from the page: a
 * page redone after a crash makes the same ids even when it holds other contacts than the first try
 * (a smaller quota left, a member joined, a step delivered twice), and `createMany(…, { mayExist })`
 * leaves those already made: exactly one email per contact. An email already made and still waiting is queued again (as a
 * reference; a second message is harmless, the claim hands an email to SES at most once).
 *
 * Pacing: a page is taken only while the lane holds less than LANE_AHEAD_MS of sending at the
 * account's rate (emails made but not yet sent, suppressed or ended, from the broadcast's totals),
 * else the next step waits for the lane to drain, so a broadcast email never waits long in the lane
 * and a million-contact broadcast never floods it. SES's 24-hour quota: a page never takes more than
 * is left of it (less what the lane holds); with nothing left the broadcast is `queued` with
 * `waiting: quota` and looks again in minutes. Once every page is done, later steps check the
 * totals and mark it `sent` when every email made is handled.
 *
 * A step of an old generation, or of a broadcast canceled, sent or gone, does nothing: cancel
 * stops the fan-out at its next step (the lane ends the emails already queued).
 */

/** How much sending (at the account's rate) the lane may hold before the fan-out waits for it. */
export const LANE_AHEAD_MS = 60_000;
/** The most contacts a page takes (its reads, writes and lane messages stay well within a step). */
export const MAX_PAGE = 500;
/** A page smaller than this is not worth a step while the lane drains (unless the quota is what limits it). */
const MIN_PAGE = 25;
/** The rate assumed until the send consumers have read SES's (the sandbox's). */
const UNKNOWN_RATE = 1;
/** How long a broadcast waits for SES's quota, or for sending to resume, before it looks again. */
export const BLOCKED_RETRY_MS = 300_000;
/** How often, at most and at least, a fully fanned-out broadcast checks whether every email is handled. */
const FINISH_CHECK_MIN_MS = 2_000;
const FINISH_CHECK_MAX_MS = 60_000;

export type FanOutOutcome =
  /** The message's generation is not the broadcast's, or it is canceled, sent, a draft or gone. */
  | 'dropped'
  /** Not due yet: the next step waits for its time. */
  | 'not_due'
  /** SES's quota is spent or sending is paused: it waits. */
  | 'waiting'
  /** The lane is full enough: the next step waits for it to drain. */
  | 'paced'
  /** The step's time is up: the next step goes on at once. */
  | 'continued'
  /** Every page is done; the next step checks whether every email is handled. */
  | 'finishing'
  | 'sent'
  /** Another step moved the checkpoint first: this one stops, the other goes on. */
  | 'raced';

export interface StepLimits {
  /** True when the step must stop (its function's time nearly gone). */
  readonly timeUp?: () => boolean;
  /** At most this many contacts a page. @default MAX_PAGE */
  readonly pageSize?: number;
  /** At most this many pages a step (tests). @default unlimited */
  readonly maxPages?: number;
}

const handled = (t: BroadcastTotals) => t.sent + t.suppressed + t.ended;

export async function runFanOutStep(
  deps: FanOutDeps,
  message: { broadcast_id: string; generation: number },
  limits: StepLimits = {},
): Promise<FanOutOutcome> {
  const { broadcast_id: id, generation } = message;
  const broadcast = await deps.store.get(id);
  if (!broadcast || broadcast.generation !== generation) return 'dropped';
  if (!['scheduled', 'queued', 'sending'].includes(broadcast.status)) return 'dropped';
  const nowMs = deps.clock.now().getTime();
  if (broadcast.status === 'scheduled' && broadcast.scheduled_at) {
    const dueInMs = Date.parse(broadcast.scheduled_at) - nowMs;
    if (dueInMs > 0) {
      await deps.queue.next(id, generation, Math.min(MAX_DEFER_MS, dueInMs));
      return 'not_due';
    }
  }
  if (broadcast.fanout?.done) return finishOrWait(deps, broadcast, broadcast.fanout);

  let progress = broadcast.fanout;
  if (!progress) {
    const first: FanOutProgress = {
      cursor: null,
      page_at: nowMs,
      // Members who join after this moment are not sent to.
      members_before: nowMs,
      created: 0,
      skipped: { unsubscribed: 0, opted_out: 0 },
      done: false,
    };
    if (!(await deps.store.begin(id, generation, first, new Date(nowMs).toISOString()))) return 'raced';
    progress = first;
  }

  const [topic, properties] = await Promise.all([
    broadcast.topic_id ? deps.audience.topic(broadcast.topic_id) : Promise.resolve(undefined),
    deps.audience.properties(),
  ]);
  for (let pages = 0; ; pages++) {
    if (pages > 0 && (limits.timeUp?.() || pages >= (limits.maxPages ?? Number.POSITIVE_INFINITY))) {
      await deps.queue.next(id, generation, 0);
      return 'continued';
    }
    const room = await roomFor(deps, broadcast, progress, limits.pageSize ?? MAX_PAGE);
    if ('delayMs' in room) {
      await deps.queue.next(id, generation, room.delayMs);
      return 'paced';
    }
    if ('wait' in room) {
      const since =
        broadcast.waiting?.reason === room.wait ? broadcast.waiting.since : deps.clock.now().toISOString();
      if (!(await deps.store.wait(id, generation, { reason: room.wait, detail: room.detail, since })))
        return 'dropped';
      await deps.queue.next(id, generation, BLOCKED_RETRY_MS);
      return 'waiting';
    }
    const next = await fanOutPage(deps, broadcast, progress, room.size, { topic, properties });
    if (!(await deps.store.checkpoint(id, generation, progress.page_at, next))) return 'raced';
    broadcast.waiting = undefined;
    progress = next;
    if (next.done) return finishOrWait(deps, broadcast, next);
  }
}

/** How many contacts the next page may take now, or why it waits. */
async function roomFor(
  deps: FanOutDeps,
  broadcast: Broadcast,
  progress: FanOutProgress,
  pageSize: number,
): Promise<{ size: number } | { wait: 'quota' | 'paused'; detail: string } | { delayMs: number }> {
  const [stored, totals] = await Promise.all([
    deps.quota.get(),
    progress.created > 0 ? deps.totals.totals(broadcast.id) : undefined,
  ]);
  const quota = stored.quota;
  if (quota && !quota.sendingEnabled)
    return { wait: 'paused', detail: 'SES has paused sending for the account' };
  const rate = quota?.maxSendRate && quota.maxSendRate > 0 ? quota.maxSendRate : UNKNOWN_RATE;
  const inLane = totals ? Math.max(0, progress.created - handled(totals)) : 0;
  const size = Math.min(pageSize, Math.floor((rate * LANE_AHEAD_MS) / 1000) - inLane);
  if (quota && quota.max24HourSend >= 0) {
    const left = quota.max24HourSend - quota.sentLast24Hours - inLane;
    if (left <= 0)
      return {
        wait: 'quota',
        detail:
          `SES's 24-hour quota (${quota.max24HourSend}) is spent: ${quota.sentLast24Hours} sent in the last 24 hours` +
          (inLane ? `, ${inLane} of this broadcast's emails waiting to be sent` : ''),
      };
    if (left < size) return { size: left };
  }
  if (size >= Math.min(MIN_PAGE, pageSize)) return { size };
  // The lane holds a minute's sending already: look again once about half of it has left.
  const delayMs = Math.ceil((inLane / rate) * 1000 - LANE_AHEAD_MS / 2);
  return { delayMs: Math.min(MAX_DEFER_MS, Math.max(1_000, delayMs)) };
}

/** Every page done: `sent` once every email made is handled, else a look again in a while. */
async function finishOrWait(
  deps: FanOutDeps,
  broadcast: Broadcast,
  progress: FanOutProgress,
): Promise<FanOutOutcome> {
  const totals = progress.created > 0 ? await deps.totals.totals(broadcast.id) : undefined;
  const left = totals ? progress.created - handled(totals) : 0;
  if (left <= 0) {
    await deps.store.finish(broadcast.id, broadcast.generation);
    return 'sent';
  }
  const rate = (await deps.quota.get()).quota?.maxSendRate || UNKNOWN_RATE;
  const delayMs = Math.min(FINISH_CHECK_MAX_MS, Math.max(FINISH_CHECK_MIN_MS, (left / rate) * 1000));
  await deps.queue.next(broadcast.id, broadcast.generation, Math.ceil(delayMs));
  return 'finishing';
}

/**
 * One page: the members after the cursor, those still to be sent to rendered and stored (their ids
 * from the broadcast, the contact and the fan-out's start), queued on the lane; answers the
 * checkpoint past them.
 */
async function fanOutPage(
  deps: FanOutDeps,
  broadcast: Broadcast,
  progress: FanOutProgress,
  size: number,
  audience: {
    topic: Topic | undefined;
    properties: Awaited<ReturnType<FanOutDeps['audience']['properties']>>;
  },
): Promise<FanOutProgress> {
  const segmentId = broadcast.segment_id;
  const { members, last, has_more } = segmentId
    ? await deps.members.membersAfter(segmentId, progress.cursor, size)
    : { members: [], last: progress.cursor, has_more: false };
  const joined = members.filter(
    (m): m is SegmentMember & { contact: Contact } =>
      m.contact !== undefined && Date.parse(m.joined_at) <= progress.members_before,
  );
  const skipped = { ...progress.skipped };
  const sendTo: Contact[] = [];
  const choices =
    broadcast.topic_id && audience.topic
      ? await deps.audience.choicesFor(
          broadcast.topic_id,
          joined.filter((m) => !m.contact.unsubscribed).map((m) => m.contact_id),
        )
      : new Map();
  for (const { contact } of joined) {
    if (contact.unsubscribed) skipped.unsubscribed++;
    else if (broadcast.topic_id && !optedIn(audience.topic, choices.get(contact.id)?.subscription))
      skipped.opted_out++;
    else sendTo.push(contact);
  }
  const createdAt = deps.clock.now().toISOString();
  const emails: NewEmail[] = await Promise.all(
    sendTo.map(async (contact) => {
      const emailId = broadcastEmailId(broadcast.id, contact.id, progress.members_before);
      const url = await deps.unsubscribeLinks.url({
        address: contact.email,
        topicId: broadcast.topic_id,
        emailId,
      });
      return {
        id: emailId,
        created_at: createdAt,
        content: contentFor(broadcast, contact, audience.properties, url),
      };
    }),
  );
  if (emails.length) {
    // The ids carry the fan-out's start (members_before), older than now: the sweeper looks back to them.
    const oldest = emails.map((e) => e.id).sort()[0] as string;
    await deps.sweep
      ?.rewind(oldest)
      .catch((error) => deps.log?.warn('could not move the sweeper back to a broadcast page', { error }));
    const { existing } = await deps.emails.createMany(emails, { mayExist: true });
    const made = new Set(existing);
    const jobs: (SendJob | DueJob)[] = emails
      .filter((e) => !made.has(e.id))
      .map((e) => ({ id: e.id, content: e.content }));
    if (existing.length) {
      // Made by a step that died: queued again, as references, while nothing has handed them to SES.
      const nowMs = deps.clock.now().getTime();
      for (const state of await deps.emails.states(existing))
        if (state.status === 'queued' && !state.sent_at && state.send_started_at === undefined)
          jobs.push(dueJob(state, nowMs));
    }
    await deps.lane.enqueue(jobs);
  }
  const nowMs = deps.clock.now().getTime();
  return {
    cursor: last,
    // Strictly later, so the next page's ids (and the checkpoint's condition) differ from this one's.
    page_at: Math.max(nowMs, progress.page_at + 1),
    members_before: progress.members_before,
    created: progress.created + emails.length,
    skipped,
    done: !has_more,
  };
}

/**
 * Whether a contact with this choice is sent a broadcast of the topic: its choice, else the topic's
 * default (as the send gate judges it, emails/deliver-gate.ts). A topic deleted since: nobody.
 */
const optedIn = (topic: Topic | undefined, choice: 'opt_in' | 'opt_out' | undefined) =>
  topic !== undefined && (choice ?? topic.default_subscription) === 'opt_in';

/** A hidden preheader: what mail clients show beside the subject in the inbox. */
const preheader = (text: string) =>
  `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')}</div>`;

/** One contact's email: the broadcast rendered for it (its fields, its properties, its own unsubscribe link). */
export function contentFor(
  broadcast: Broadcast,
  contact: Contact,
  properties: Parameters<typeof renderForContact>[2],
  unsubscribeUrl: string,
): EmailContent {
  const html =
    broadcast.html !== null && broadcast.preview_text
      ? preheader(broadcast.preview_text) + broadcast.html
      : broadcast.html;
  const rendered = renderForContact(
    { subject: broadcast.subject, html, text: broadcast.text },
    contact,
    properties,
    unsubscribeUrl,
  );
  return {
    from: broadcast.from,
    to: [contact.email],
    cc: [],
    bcc: [],
    reply_to: broadcast.reply_to,
    subject: rendered.subject,
    html: rendered.html,
    text: rendered.text,
    tags: [],
    headers: {},
    ...(broadcast.topic_id ? { topic_id: broadcast.topic_id } : {}),
    broadcast_id: broadcast.id,
  };
}

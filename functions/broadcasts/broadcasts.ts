import type { ContactProperty } from '../contacts/contact.js';
import type { AudienceReads } from '../contacts/reads.js';
import { loadScheduleReader, parseScheduledAt } from '../emails/schedule.js';
import { parseAddress } from '../shared/address.js';
import { ApiError, type FieldError, notFound, validationError } from '../shared/errors.js';
import { newUuid } from '../shared/ids.js';
import type { PageQuery } from '../shared/list.js';
import type { Clock, Log } from '../shared/ports.js';
import type {
  Broadcast,
  BroadcastContent,
  BroadcastStatus,
  BroadcastTotals,
  BroadcastTotalsReader,
} from './broadcast.js';
import { renderForContact, unknownMergeTags } from './merge-tags.js';
import { type CreateBroadcastInput, MAX_BROADCAST_BODY_BYTES, type UpdateBroadcastInput } from './model.js';
import type { BroadcastFanOutQueue, BroadcastStore, Expected } from './ports.js';

/**
 * The broadcasts' use cases behind their routes: a draft is made, edited, sent (now or at a time),
 * canceled, duplicated or deleted. Every change of status is a write conditioned on the status and
 * generation read, so two requests (or a request and the fan-out) never both win; a send adds one
 * to the generation and queues the fan-out's first step, which does nothing once the generation has
 * moved on (a cancel adds one too).
 *
 * Refusals: a field that names nothing (a segment or topic that does not exist) is a 400 naming it;
 * a broadcast that cannot be sent as it is (no html nor text, merge tags that name nothing, a body
 * too large, `scheduled_at` without `send`) a 422; a change its status does not allow (editing a
 * sent broadcast, canceling a draft) a 403 `validation_error`, as Resend answers it.
 */
export interface BroadcastDeps {
  broadcasts: BroadcastStore;
  clock: Clock;
  log?: Log;
}

export interface BroadcastEditDeps extends BroadcastDeps {
  audience: Pick<AudienceReads, 'segment' | 'topic' | 'properties'>;
}

export interface BroadcastSendDeps extends BroadcastEditDeps {
  fanOut: BroadcastFanOutQueue;
  /** Refuses a sender domain that is not a verified sending domain (as a send does: domains/sending.ts). */
  assertSenderDomain: (domain: string) => Promise<void>;
}

export interface BroadcastReadDeps extends BroadcastDeps {
  /** The broadcast's totals (absent: GET answers no `totals`). */
  totals?: BroadcastTotalsReader;
}

export interface BroadcastPreviewDeps extends BroadcastDeps {
  audience: Pick<AudienceReads, 'contact' | 'properties'>;
  /** The link a preview's `{{{RESEND_UNSUBSCRIBE_URL}}}` shows: not a working one. */
  previewUnsubscribeUrl: string;
}

/** Races of two changes of one broadcast: each is tried again over what the other wrote, this many times. */
const ATTEMPTS = 3;

const broadcastNotFound = (id: string) => notFound(`Broadcast "${id}" not found.`);

/** A change the broadcast's status does not allow: Resend answers these 403 `validation_error`. */
export const wrongState = (message: string) => new ApiError(403, 'validation_error', message);

/** A request well formed that cannot be done as it is (422, naming the fields). */
const unprocessable = (message: string, fields: readonly FieldError[]) =>
  new ApiError(422, 'validation_error', message, fields);

const fieldError = (field: string, message: string) => validationError(message, [{ field, message }]);

export async function getBroadcast(deps: Pick<BroadcastDeps, 'broadcasts'>, id: string): Promise<Broadcast> {
  const broadcast = await deps.broadcasts.get(id);
  if (!broadcast) throw broadcastNotFound(id);
  return broadcast;
}

/** A broadcast and, when a reader is wired, its totals (read beside it). */
export async function readBroadcast(
  deps: BroadcastReadDeps,
  id: string,
): Promise<{ broadcast: Broadcast; totals?: BroadcastTotals }> {
  const [broadcast, totals] = await Promise.all([
    getBroadcast(deps, id),
    deps.totals?.totals(id).catch((error: unknown) => {
      // The totals are an addition: a broadcast is shown without them rather than not at all.
      deps.log?.warn('broadcast totals unread', { broadcast_id: id, error: String(error) });
      return undefined;
    }),
  ]);
  return totals ? { broadcast, totals } : { broadcast };
}

export const listBroadcasts = (deps: Pick<BroadcastDeps, 'broadcasts'>, page: PageQuery) =>
  deps.broadcasts.list(page);

/** The segment a body names: `segment_id`, or Resend's deprecated `audience_id` (the same ids here). */
function segmentOf(input: Pick<UpdateBroadcastInput, 'segment_id' | 'audience_id'>): string | undefined {
  const { segment_id, audience_id } = input;
  if (segment_id !== undefined && audience_id !== undefined && segment_id !== audience_id)
    throw fieldError(
      'audience_id',
      `audience_id ("${audience_id}") is segment_id's older name and differs from it ("${segment_id}"): give one.`,
    );
  return segment_id ?? audience_id;
}

/** The segment and topic named must exist (a 400 naming the field). */
async function assertReferences(
  deps: BroadcastEditDeps,
  segmentId: string | undefined,
  topicId: string | null | undefined,
): Promise<void> {
  const [segment, topic] = await Promise.all([
    segmentId === undefined ? undefined : deps.audience.segment(segmentId),
    topicId ? deps.audience.topic(topicId) : undefined,
  ]);
  if (segmentId !== undefined && !segment)
    throw fieldError(
      'segment_id',
      `Segment "${segmentId}" does not exist: create it first (POST /v1/segments).`,
    );
  if (topicId && !topic)
    throw fieldError('topic_id', `Topic "${topicId}" does not exist: create it first (POST /v1/topics).`);
}

/** Refuses html and text over what a broadcast's item may hold (ours: the item is at most 400 KB). */
function assertBodySize(content: Pick<BroadcastContent, 'html' | 'text'>): void {
  const bytes = Buffer.byteLength(content.html ?? '') + Buffer.byteLength(content.text ?? '');
  if (bytes > MAX_BROADCAST_BODY_BYTES) {
    const message = `html and text are ${bytes} bytes together; a broadcast may hold at most ${MAX_BROADCAST_BODY_BYTES} (${MAX_BROADCAST_BODY_BYTES / 1024} KB).`;
    throw unprocessable(message, [{ field: content.html ? 'html' : 'text', message }]);
  }
}

/**
 * What a broadcast must be to be sent: a segment, html or text, a sender whose domain is verified,
 * and no merge tag that names nothing (neither a contact field, a property, nor the unsubscribe link).
 */
async function assertSendable(deps: BroadcastSendDeps, content: BroadcastContent): Promise<void> {
  if (!content.segment_id)
    throw unprocessable('The broadcast has no segment: set segment_id before sending.', [
      { field: 'segment_id', message: 'is required to send' },
    ]);
  if (!content.html && !content.text)
    throw unprocessable('The broadcast has neither html nor text: give one before sending.', [
      { field: 'html', message: 'html or text is required to send' },
    ]);
  const parsed = parseAddress(content.from);
  if ('error' in parsed) throw fieldError('from', parsed.error);
  const properties: readonly ContactProperty[] = await deps.audience.properties();
  const unknown = unknownMergeTags(content, properties);
  if (unknown.length > 0) {
    const message = `These merge tags name no contact field, property or link: ${unknown.map((t) => `{{{${t}}}}`).join(', ')}. Define the property (POST /v1/contact-properties) or correct the tag.`;
    throw unprocessable(message, [{ field: 'html', message }]);
  }
  await deps.assertSenderDomain(parsed.email.slice(parsed.email.lastIndexOf('@') + 1).toLowerCase());
}

/** When a send is to happen: at once (null), or at the time given (ISO or English, as a send takes it). */
async function scheduleOf(text: string | null | undefined, now: Date): Promise<string | null> {
  if (text === undefined || text === null) return null;
  await loadScheduleReader(text);
  return parseScheduledAt(text, now);
}

const delayUntil = (scheduledAt: string | null, nowMs: number) =>
  scheduledAt === null ? 0 : Math.max(0, Date.parse(scheduledAt) - nowMs);

/**
 * Queues the fan-out's first step of a send just written. When the queue refuses, the send is
 * undone (back to a draft, the generation moved on) and the failure answered, so the broadcast is
 * never left queued with nothing to move it.
 */
async function startFanOut(deps: BroadcastSendDeps, broadcast: Broadcast, nowMs: number): Promise<void> {
  try {
    await deps.fanOut.next(broadcast.id, broadcast.generation, delayUntil(broadcast.scheduled_at, nowMs));
  } catch (error) {
    const undone = await deps.broadcasts
      .changeStatus(
        broadcast.id,
        { statuses: [broadcast.status], generation: broadcast.generation },
        { status: 'draft', generation: broadcast.generation + 1, scheduled_at: null },
      )
      .catch(() => false);
    deps.log?.error('broadcast fan-out not queued', {
      broadcast_id: broadcast.id,
      undone,
      error: String(error),
    });
    throw error;
  }
}

/**
 * Creates a draft, or with `send: true` sends it at once (or at `scheduled_at`). The segment and
 * topic must exist; `scheduled_at` without `send: true` is refused (Resend's rule).
 */
export async function createBroadcast(
  deps: BroadcastSendDeps,
  input: CreateBroadcastInput,
): Promise<Broadcast> {
  const now = deps.clock.now();
  const schedule = input.scheduled_at ?? null;
  if (schedule !== null && input.send !== true) {
    const message =
      'scheduled_at can only be used with send: true (or send the draft later with POST /v1/broadcasts/{id}/send).';
    throw unprocessable(message, [{ field: 'scheduled_at', message }]);
  }
  const segmentId = segmentOf(input);
  if (segmentId === undefined)
    throw fieldError('segment_id', 'segment_id is required: the segment to send to.');
  const content: BroadcastContent = {
    name: input.name ?? null,
    segment_id: segmentId,
    from: input.from,
    subject: input.subject,
    reply_to: input.reply_to ?? [],
    preview_text: input.preview_text ?? null,
    html: input.html ?? null,
    text: input.text ?? null,
    topic_id: input.topic_id ?? null,
  };
  assertBodySize(content);
  await assertReferences(deps, segmentId, content.topic_id);
  let status: BroadcastStatus = 'draft';
  let scheduledAt: string | null = null;
  if (input.send === true) {
    scheduledAt = await scheduleOf(schedule, now);
    await assertSendable(deps, content);
    status = scheduledAt === null ? 'queued' : 'scheduled';
  }
  const broadcast: Broadcast = {
    ...content,
    id: newUuid(),
    status,
    created_at: now.toISOString(),
    scheduled_at: scheduledAt,
    sent_at: null,
    generation: status === 'draft' ? 0 : 1,
  };
  await deps.broadcasts.create(broadcast);
  if (status !== 'draft') await startFanOut(deps, broadcast, now.getTime());
  return broadcast;
}

/** Changes a draft's content: what is given changes, what is left out stays, null removes. */
export async function updateBroadcast(
  deps: BroadcastEditDeps,
  id: string,
  input: UpdateBroadcastInput,
): Promise<Broadcast> {
  const segmentId = segmentOf(input);
  await assertReferences(deps, segmentId, input.topic_id);
  const change: Partial<BroadcastContent> = {
    ...(input.name === undefined ? {} : { name: input.name }),
    ...(segmentId === undefined ? {} : { segment_id: segmentId }),
    ...(input.from === undefined ? {} : { from: input.from }),
    ...(input.subject === undefined ? {} : { subject: input.subject }),
    ...(input.reply_to === undefined ? {} : { reply_to: input.reply_to ?? [] }),
    ...(input.preview_text === undefined ? {} : { preview_text: input.preview_text }),
    ...(input.html === undefined ? {} : { html: input.html }),
    ...(input.text === undefined ? {} : { text: input.text }),
    ...(input.topic_id === undefined ? {} : { topic_id: input.topic_id }),
  };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const previous = await getBroadcast(deps, id);
    if (previous.status !== 'draft')
      throw wrongState(`Only a draft can be changed; this broadcast is ${previous.status}.`);
    const next = { ...previous, ...change };
    assertBodySize(next);
    if (Object.keys(change).length === 0) return previous;
    if (await deps.broadcasts.updateDraft(id, previous.generation, change)) return next;
  }
  throw new ApiError(
    409,
    'already_exists',
    'Other requests changed the broadcast at the same time; try again.',
  );
}

/**
 * Sends a draft now, or at `scheduledAt` (ISO 8601 or English, at most 30 days ahead, as a send
 * takes it): `queued` or `scheduled`, the generation one more, the fan-out's first step queued.
 */
export async function sendBroadcast(
  deps: BroadcastSendDeps,
  id: string,
  scheduledAtText: string | null | undefined,
): Promise<Broadcast> {
  const now = deps.clock.now();
  const scheduledAt = await scheduleOf(scheduledAtText, now);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const previous = await getBroadcast(deps, id);
    if (previous.status !== 'draft')
      throw wrongState(
        `Only a draft can be sent; this broadcast is ${previous.status}${previous.status === 'sent' || previous.status === 'canceled' ? ' (duplicate it to send it again: POST /v1/broadcasts/{id}/duplicate)' : ''}.`,
      );
    await assertReferences(deps, previous.segment_id ?? undefined, previous.topic_id);
    await assertSendable(deps, previous);
    const next: Broadcast = {
      ...previous,
      status: scheduledAt === null ? 'queued' : 'scheduled',
      scheduled_at: scheduledAt,
      generation: previous.generation + 1,
    };
    const moved = await deps.broadcasts.changeStatus(
      id,
      { statuses: ['draft'], generation: previous.generation },
      { status: next.status, generation: next.generation, scheduled_at: scheduledAt },
    );
    if (moved) {
      await startFanOut(deps, next, now.getTime());
      return next;
    }
  }
  throw new ApiError(
    409,
    'already_exists',
    'Other requests changed the broadcast at the same time; try again.',
  );
}

/**
 * Cancels a scheduled or sending broadcast, as Resend does: a `scheduled` one goes back to a
 * draft (nothing was sent; it can be changed and sent again), a `queued` or `sending` one is
 * `canceled` (what SES already has is sent; no other email goes). Either way the generation moves
 * on, so the fan-out's steps queued for it do nothing.
 */
export async function cancelBroadcast(deps: BroadcastDeps, id: string): Promise<Broadcast> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const previous = await getBroadcast(deps, id);
    const expected: Expected = { statuses: [previous.status], generation: previous.generation };
    let next: Broadcast;
    if (previous.status === 'scheduled')
      next = { ...previous, status: 'draft', scheduled_at: null, generation: previous.generation + 1 };
    else if (previous.status === 'queued' || previous.status === 'sending')
      next = { ...previous, status: 'canceled', generation: previous.generation + 1 };
    else
      throw wrongState(
        `Only a scheduled, queued or sending broadcast can be canceled; this one is ${previous.status}.`,
      );
    const moved = await deps.broadcasts.changeStatus(id, expected, {
      status: next.status,
      generation: next.generation,
      ...(next.status === 'draft' ? { scheduled_at: null } : {}),
    });
    if (moved) return next;
  }
  throw new ApiError(
    409,
    'already_exists',
    'Other requests changed the broadcast at the same time; try again.',
  );
}

/**
 * Deletes a draft; a scheduled broadcast is deleted too, which cancels it (Resend's docs: its
 * fan-out step finds no broadcast and does nothing). One queued, sending, sent or canceled is kept
 * (its emails refer to it): 403.
 */
export async function deleteBroadcast(deps: BroadcastDeps, id: string): Promise<Broadcast> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const previous = await getBroadcast(deps, id);
    if (previous.status !== 'draft' && previous.status !== 'scheduled')
      throw wrongState(
        `Only a draft or a scheduled broadcast can be deleted; this one is ${previous.status}${previous.status === 'queued' || previous.status === 'sending' ? ' (cancel it first: POST /v1/broadcasts/{id}/cancel)' : ''}.`,
      );
    if (await deps.broadcasts.remove(id, { statuses: [previous.status], generation: previous.generation }))
      return previous;
  }
  throw new ApiError(
    409,
    'already_exists',
    'Other requests changed the broadcast at the same time; try again.',
  );
}

/** A new draft with the same content (any status may be duplicated: a sent one to send it again). */
export async function duplicateBroadcast(deps: BroadcastDeps, id: string): Promise<Broadcast> {
  const source = await getBroadcast(deps, id);
  const copy: Broadcast = {
    name: source.name,
    segment_id: source.segment_id,
    from: source.from,
    subject: source.subject,
    reply_to: source.reply_to,
    preview_text: source.preview_text,
    html: source.html,
    text: source.text,
    topic_id: source.topic_id,
    id: newUuid(),
    status: 'draft',
    created_at: deps.clock.now().toISOString(),
    scheduled_at: null,
    sent_at: null,
    generation: 0,
  };
  await deps.broadcasts.create(copy);
  return copy;
}

/** The contact a preview is for: none given is a contact with no fields (each tag's fallback shows). */
const SAMPLE_CONTACT = { email: '', first_name: null, last_name: null, props: {} };

/**
 * The broadcast rendered for one contact (by id or address), as its email would be: merge tags
 * filled with the contact's fields and properties or their fallbacks. The unsubscribe link shown is
 * `previewUnsubscribeUrl`, not a working one (a preview is no email: it has no id to sign).
 */
export async function previewBroadcast(
  deps: BroadcastPreviewDeps,
  id: string,
  contactRef: string | null | undefined,
) {
  const [broadcast, properties, contact] = await Promise.all([
    getBroadcast(deps, id),
    deps.audience.properties(),
    contactRef ? deps.audience.contact(contactRef.trim()) : undefined,
  ]);
  if (contactRef && !contact)
    throw fieldError(
      'contact',
      `Contact "${contactRef}" not found: give a contact's id or its email address.`,
    );
  const rendered = renderForContact(
    broadcast,
    contact ?? SAMPLE_CONTACT,
    properties,
    deps.previewUnsubscribeUrl,
  );
  return {
    object: 'broadcast_preview' as const,
    contact_id: contact?.id ?? null,
    email: contact?.email ?? null,
    ...rendered,
  };
}

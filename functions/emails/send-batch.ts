import { domainOf } from '../shared/address.js';
import { ApiError } from '../shared/errors.js';
import { newEmailId } from '../shared/ids.js';
import { type BatchEntry, type BatchError, batchIds } from './batch.js';
import { type SendEmailInput, toContent } from './email.js';
import { fingerprint } from './idempotency.js';
import type { DueJob, EmailState, IdempotencyStore, NewEmail, SendJob } from './ports.js';
import { dueJob } from './schedule.js';
import { dueSoon } from './scheduler.js';
import { claimKey, keepAnswer, type SendEmailDeps } from './send-email.js';

export interface BatchAnswer {
  data: { id: string }[];
  /** Permissive mode only: the emails not sent, by position, and why. */
  errors?: BatchError[];
}

export interface BatchRequest {
  entries: BatchEntry[];
  /** From validation (permissive mode); the sender checks add theirs. */
  errors: BatchError[];
  mode: 'strict' | 'permissive';
  /** The key sending it: a scheduled email is sent only while it exists. */
  keyId: string;
  /** The sender checks of one email: the key's domain restriction, then the domain's verification. */
  checkSender: (input: SendEmailInput) => Promise<void>;
}

/**
 * `POST /v1/emails/batch`: each email is its own record and goes the way a single send goes, but
 * the whole batch is stored in a few batch writes and queued in SendMessageBatch calls. Email `i`
 * of the request gets the id `first + i`, so ids sort in input order and a resumed request finds
 * the same ones.
 *
 * Strict: a sender check that fails refuses the whole batch, naming the email (nothing stored).
 * Permissive: that email is left out and named in `errors`.
 *
 * Once stored, the batch is accepted whatever happens next: emails the queue did not take are
 * queued by the sweeper. If storing fails, the answer is 500; without an Idempotency-Key some of
 * the batch may have been stored and will be sent (docs/api.md says to send batches with a key).
 */
export async function sendBatch(deps: SendEmailDeps, request: BatchRequest, firstId = newEmailId()) {
  const { accepted, errors } = await checkSenders(request);
  const ids = batchIds(firstId, maxIndex(request) + 1);
  const now = deps.clock.now();
  const emails = accepted.map((entry) => newEmail(entry, ids[entry.index] as string, now, request.keyId));
  // Fresh ids. (A request that holds an idempotency key never outlives the key's lease: API
  // functions time out first, so a resumed request cannot race this one's writes.)
  if (emails.length) await deps.emails.createMany(emails);
  await queueOrLeaveToSweeper(deps, emails);
  deps.counters?.count('EmailsAccepted', emails.length);
  return answer(request.mode, emails, errors);
}

/**
 * The batch with an `Idempotency-Key`: the same key and batch (and validation mode) give the same
 * answer for 24 hours, without sending again. A request that died midway is resumed under the same
 * ids: emails it stored are kept as they are (queued again if still waiting), the others stored now.
 */
export async function sendBatchOnce(
  deps: SendEmailDeps & { idempotency: IdempotencyStore },
  /** The batch, read once the key is claimed (a replay answers as stored, whatever the time now). */
  requestOf: () => BatchRequest | Promise<BatchRequest>,
  mode: BatchRequest['mode'],
  key: { scope: string; idempotencyKey: string; body: unknown },
): Promise<BatchAnswer> {
  const claim = await claimKey(deps, key, fingerprint({ batch: key.body, mode }), newEmailId());
  if ('replay' in claim) return claim.replay as BatchAnswer;
  const { id: firstId, resumed } = claim;
  let result: BatchAnswer;
  try {
    const request = await requestOf();
    result = resumed ? await resumeBatch(deps, request, firstId) : await sendBatch(deps, request, firstId);
  } catch (error) {
    // Given back only when nothing of the batch can be stored: a refused check, a validation.
    if (error instanceof ApiError && error.statusCode < 500 && !resumed)
      await deps.idempotency.abandon(key.scope, claim.keyHash, firstId).catch(() => undefined);
    throw error;
  }
  await keepAnswer(deps, key.scope, claim, result);
  return result;
}

async function resumeBatch(deps: SendEmailDeps, request: BatchRequest, firstId: string) {
  const ids = batchIds(firstId, maxIndex(request) + 1);
  const idOf = (entry: BatchEntry) => ids[entry.index] as string;
  // What the request that died stored stays as it is: accepted, whatever the checks say now.
  const stored = new Map<string, EmailState>(
    (await deps.emails.states(request.entries.map(idOf))).map((state) => [state.id, state]),
  );
  // Stored under ids as old as the request that died: the sweeper must look back at them, and
  // before they are stored, so that none is missed if this request dies too.
  await deps.sweep
    ?.rewind(firstId)
    .catch((error) => deps.log?.error('could not move the sweeper back to a resumed batch', { error }));
  const { accepted, errors } = await checkSenders({
    ...request,
    entries: request.entries.filter((entry) => !stored.has(idOf(entry))),
  });
  const now = deps.clock.now();
  const created_at = now.toISOString();
  const fresh = accepted.map((entry) => newEmail(entry, idOf(entry), now, request.keyId));
  const { existing } = fresh.length
    ? await deps.emails.createMany(fresh, { mayExist: true })
    : { existing: [] };
  // Stored meanwhile (the first request was only slow): as it is, too.
  for (const state of existing.length ? await deps.emails.states(existing) : []) stored.set(state.id, state);
  const waiting = fresh.filter((email) => !existing.includes(email.id));
  // Those stored before, as references: the consumer sends what was stored, not this request's
  // rendering of a template that may have changed since. A scheduled one is the scheduler's.
  const storedWaiting = request.entries
    .map((entry) => stored.get(idOf(entry)))
    .filter(
      (state): state is EmailState =>
        state?.status === 'queued' &&
        !state.sent_at &&
        state.send_started_at === undefined &&
        !state.scheduled_at,
    )
    .map((state) => dueJob(state, now.getTime()));
  await queueOrLeaveToSweeper(deps, waiting, storedWaiting);
  const all = request.entries
    .filter((entry) => stored.has(idOf(entry)) || fresh.some((email) => email.id === idOf(entry)))
    .map((entry) => ({ id: idOf(entry), created_at, content: toContent(entry.input) }));
  return answer(request.mode, all, errors);
}

/**
 * The sender checks, email by email, each domain's once: strict refuses the batch if any fails,
 * naming every such email; permissive leaves them out, each with its error.
 */
async function checkSenders(request: BatchRequest) {
  const errors = [...request.errors];
  const accepted: BatchEntry[] = [];
  const failed: { index: number; error: ApiError }[] = [];
  const byDomain = new Map<string, Promise<ApiError | undefined>>();
  for (const entry of request.entries) {
    const domain = senderDomainOf(entry.input);
    if (!byDomain.has(domain))
      byDomain.set(
        domain,
        request.checkSender(entry.input).then(
          () => undefined,
          (error: unknown) => {
            if (error instanceof ApiError && error.statusCode < 500) return error;
            throw error;
          },
        ),
      );
    const error = await byDomain.get(domain);
    if (!error) accepted.push(entry);
    else failed.push({ index: entry.index, error });
  }
  if (request.mode === 'strict' && failed.length) throw named(failed);
  for (const { index, error } of failed) errors.push({ index, message: error.message });
  errors.sort((a, b) => a.index - b.index);
  return { accepted, errors };
}

/** Sender check errors, as the batch's: the first one's status, every email named by position. */
function named(failed: { index: number; error: ApiError }[]) {
  const first = failed[0]?.error as ApiError;
  return new ApiError(
    first.statusCode,
    first.errorName,
    failed.map(({ index, error }) => `Email ${index}: ${error.message}`).join('; '),
    failed.flatMap(({ index, error }) =>
      (error.fieldErrors ?? [{ field: 'from', message: error.message }]).map((f) => ({
        ...f,
        field: `${index}.${f.field}`,
      })),
    ),
  );
}

const maxIndex = (request: BatchRequest) =>
  Math.max(-1, ...request.entries.map((e) => e.index), ...request.errors.map((e) => e.index));

/** A batch's email as stored: scheduled ones with their time and key (queued here when due soon). */
function newEmail(entry: BatchEntry, id: string, now: Date, keyId: string): NewEmail {
  const at = entry.input.scheduled_at;
  return {
    id,
    created_at: now.toISOString(),
    content: toContent(entry.input),
    ...(at ? { schedule: { at, key_id: keyId, dispatched: dueSoon(at, now.getTime()) } } : {}),
  };
}

/**
 * Queues the emails to send now, and the scheduled ones due soon (held by the queue until their
 * time); those the queue does not take are the sweeper's (or, scheduled, the scheduler's).
 */
async function queueOrLeaveToSweeper(deps: SendEmailDeps, emails: NewEmail[], references: DueJob[] = []) {
  const now = deps.clock.now().getTime();
  const jobs = [
    ...emails.flatMap(({ id, content, schedule }): (SendJob | DueJob)[] =>
      !schedule
        ? [{ id, content }]
        : schedule.dispatched
          ? [dueJob({ id, key_id: schedule.key_id, scheduled_at: schedule.at }, now)]
          : [],
    ),
    ...references,
  ];
  if (!jobs.length) return;
  let left: string[];
  try {
    left = await deps.queue.enqueueMany(jobs);
  } catch (error) {
    deps.log?.error('could not queue a stored batch', { error });
    left = jobs.map((job) => job.id);
  }
  if (!left.length) return;
  deps.log?.error('could not queue stored emails; the sweeper or scheduler will', { email_ids: left });
  // Scheduled ones marked as queued are unmarked, so the scheduler's next run queues them.
  await Promise.all(
    emails
      .filter((email) => email.schedule?.dispatched && left.includes(email.id))
      .map((email) =>
        deps.emails
          .reschedule(email.id, email.schedule?.at ?? '', false, { unmark: true })
          .catch(() => undefined),
      ),
  );
}

const answer = (
  mode: BatchRequest['mode'],
  emails: Pick<NewEmail, 'id'>[],
  errors: BatchError[],
): BatchAnswer => ({
  data: emails.map(({ id }) => ({ id })),
  ...(mode === 'permissive' ? { errors } : {}),
});

/** The sender domain of an email, for the checks. */
export const senderDomainOf = (input: SendEmailInput) => domainOf(input.from.email);

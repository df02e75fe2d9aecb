import { domainOf } from '../shared/address.js';
import { validationError } from '../shared/errors.js';
import { newEmailId } from '../shared/ids.js';
import type { Clock, ContentStore, Counters, Log } from '../shared/ports.js';
import { type TargetPolicy, urlProblem } from '../shared/targets.js';
import { attachmentKey, bodyKey, storedAttachments, withContentTypes } from './attachments.js';
import { type EmailContent, type SendEmailInput, toContent } from './email.js';
import {
  fingerprint,
  hashIdempotencyKey,
  idempotencyInProgress,
  idempotencyMismatch,
} from './idempotency.js';
import type {
  DueJob,
  EmailQueue,
  EmailRepository,
  EmailState,
  IdempotencyStore,
  SendJob,
  SweepStore,
} from './ports.js';
import { dueJob } from './schedule.js';
import { dueSoon, queueItself } from './scheduler.js';
import type { EmailStatus } from './status.js';

export interface SendEmailDeps {
  emails: EmailRepository;
  queue: EmailQueue;
  clock: Clock;
  /** Refuses a sender domain that is not a verified sending domain of this service (see domains.ts). */
  assertSenderDomain: (domain: string) => Promise<void>;
  /** The sweeper's progress, moved back when a resumed request stores an email under an old id. */
  sweep?: Pick<SweepStore, 'rewind'>;
  /** Where attachments and large bodies go (absent: an email with attachments is refused). */
  content?: ContentStore;
  /** Which attachment URLs (`path`) may be fetched (absent: https to public addresses only). */
  targets?: TargetPolicy;
  log?: Log;
  counters?: Counters;
}

export interface SentEmail {
  id: string;
  /** `queued` for a new email; a resumed request answers the email's status as it is now. */
  status: EmailStatus;
  created_at: string;
  /** A scheduled email: `last_event: scheduled` and its time (ISO UTC). */
  last_event?: 'scheduled';
  scheduled_at?: string;
}

/** A scheduled send: when (ISO UTC, already checked) and the key that scheduled it. */
export interface Schedule {
  at: string;
  key_id: string;
}

/**
 * Accepts an email: check the sender's domain, then store it, then enqueue it. Once stored, the
 * email is accepted whatever happens next: if the queue refuses (or the function dies before
 * queueing), the sweeper finds it queued and unsent and puts it on the queue (see sweep.ts). A
 * store whose answer was lost but which landed counts as stored. So a client is told 500 for an
 * email that may go out only when the table could not even be read back.
 */
export async function sendEmail(
  deps: SendEmailDeps,
  input: SendEmailInput,
  id: string = newEmailId(),
  schedule?: Schedule,
): Promise<SentEmail> {
  assertAttachmentsAllowed(deps, input);
  await deps.assertSenderDomain(domainOf(input.from.email));
  return storeAndQueue(deps, (at) => storedContent(deps, input, at), id, schedule);
}

/**
 * Bodies and attachment records above this stay out of the email's body item (DynamoDB's items
 * hold 400 KB): the bodies go to the content store instead. Every email the batch route takes,
 * and every single one of the sizes taken before attachments existed, stays in the table.
 */
export const BODY_ITEM_MAX_BYTES = 256 * 1024;

/** Attachments need the content store, and a `path` must be a URL the service may fetch. */
function assertAttachmentsAllowed(deps: SendEmailDeps, input: SendEmailInput) {
  const attachments = input.attachments ?? [];
  if (!attachments.length) return;
  if (!deps.content) throw validationError('attachments are not enabled on this service');
  const fields = attachments.flatMap((attachment, index) => {
    if (!attachment.path) return [];
    const problem = urlProblem(attachment.path, deps.targets ?? { allowLoopback: false });
    return problem
      ? [{ field: `attachments.${index}.path`, message: `attachment ${index}: path ${problem}` }]
      : attachment.path.length > 2048
        ? [
            {
              field: `attachments.${index}.path`,
              message: `attachment ${index}: path may be at most 2048 characters`,
            },
          ]
        : [];
  });
  if (fields.length)
    throw validationError(`Invalid request: ${fields.map((f) => f.message).join('; ')}`, fields);
}

/**
 * The content as stored: attachments' bytes put in the content store under the email (their keys
 * derive from the email id, so a resumed request puts the same objects again), and the bodies too
 * when they would make the body item large. Nothing is visible until the email itself is stored.
 */
async function storedContent(deps: SendEmailDeps, input: SendEmailInput, id: string): Promise<EmailContent> {
  const content = toContent(input);
  const inputs = await withContentTypes(input.attachments ?? []);
  const store = deps.content;
  const attachments = storedAttachments(id, inputs);
  if (inputs.length) {
    if (!store) throw validationError('attachments are not enabled on this service');
    await Promise.all(
      inputs.map((file, index) => {
        const stored = attachments[index];
        return file.content && stored
          ? store.put(attachmentKey(id, stored.id), file.content, file.content_type)
          : undefined;
      }),
    );
  }
  return withLargeBodiesStored(store, attachments.length ? { ...content, attachments } : content, id);
}

/** The content with its bodies put in the content store when they would make its body item large. */
export async function withLargeBodiesStored(
  store: ContentStore | undefined,
  content: EmailContent,
  id: string,
): Promise<EmailContent> {
  if (
    Buffer.byteLength(JSON.stringify([content.html, content.text, content.attachments ?? []])) <=
    BODY_ITEM_MAX_BYTES
  )
    return content;
  if (!store) throw validationError('this email is too large for this service: it has no content store');
  const key = bodyKey(id);
  await store.put(
    key,
    Buffer.from(JSON.stringify({ html: content.html, text: content.text })),
    'application/json',
  );
  return { ...content, html: null, text: null, body_key: key };
}

/**
 * Stores an email and queues it: its content made under its id first (what it puts in the content
 * store, before anything is visible), then its items, then its message. `contentOf` is how this
 * kind of email is kept: a send's fields (storedContent), or an SMTP message (accept-mime.ts).
 */
export async function storeAndQueue(
  deps: SendEmailDeps,
  contentOf: (id: string) => Promise<EmailContent>,
  id: string,
  schedule?: Schedule,
): Promise<SentEmail> {
  const now = deps.clock.now();
  const created_at = now.toISOString();
  const content = await contentOf(id);
  // Due before the scheduler's next look: queued here, held by the queue until its time.
  const soon = schedule ? dueSoon(schedule.at, now.getTime()) : false;
  try {
    await deps.emails.create({
      id,
      created_at,
      content,
      ...(schedule ? { schedule: { ...schedule, dispatched: soon } } : {}),
    });
  } catch (error) {
    const stored = await readBack(deps.emails, id);
    if (!stored) throw error;
    if (stored.created_at !== created_at) return answerOf(stored);
  }
  if (!schedule) await enqueueOrLeaveToSweeper(deps, { id, content });
  else if (soon)
    await queueItself(deps, { id, scheduled_at: schedule.at, key_id: schedule.key_id }, now.getTime());
  deps.counters?.count('EmailsAccepted');
  return answerOf({ id, status: 'queued', created_at, ...(schedule ? { scheduled_at: schedule.at } : {}) });
}

/** The answer for an email: a scheduled one says so while it waits (Resend's `last_event`). */
export const answerOf = (
  email: Pick<EmailState, 'id' | 'status' | 'created_at' | 'scheduled_at' | 'sent_at'>,
): SentEmail => ({
  id: email.id,
  status: email.status,
  created_at: email.created_at,
  ...(email.scheduled_at
    ? {
        ...(email.status === 'queued' && !email.sent_at ? { last_event: 'scheduled' as const } : {}),
        scheduled_at: email.scheduled_at,
      }
    : {}),
});

/**
 * The email's status item, read back after a failure: null when it is not stored; undefined when
 * the table cannot tell (after a few tries over about a second).
 */
async function readBack(emails: EmailRepository, id: string): Promise<EmailState | null | undefined> {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    try {
      return await emails.getState(id);
    } catch {
      // the table is failing: try again
    }
  }
  return undefined;
}

async function enqueueOrLeaveToSweeper(deps: SendEmailDeps, job: SendJob | DueJob) {
  try {
    await deps.queue.enqueue(job);
  } catch (error) {
    deps.log?.error('could not queue a stored email; the sweeper will', { email_id: job.id, error });
  }
}

/**
 * `POST /v1/emails` with an `Idempotency-Key`: one email per key and body for 24 hours. The first
 * request claims the key with the id its email will have; a repeat gets the stored answer; another
 * body gets 409; a repeat while the first still runs gets 409 too.
 *
 * If the first request died midway, a repeat resumes it under the same email id: when the email
 * was stored, the answer is that email as it is now (queued again if it is still waiting: the
 * consumer's attempt record keeps it from being sent twice); when it was not, it is stored now,
 * and the sweeper's progress is moved back to it (its id is as old as the dead request). Even if
 * the first request was only slow and stores after all, the same id keeps it one email: the
 * second store finds the first.
 *
 * The key is given back only when its email is known not to be stored (a refused sender domain, a
 * store that failed), so the client's retry starts afresh; when the table cannot even tell, the key
 * stays held and a retry after the lease resumes.
 */
export async function sendEmailOnce(
  deps: SendEmailDeps & { idempotency: IdempotencyStore },
  /**
   * The email, or how to make it once the key is claimed (a send by template renders then: a
   * replay answers as stored and reads no template, whatever became of it).
   */
  inputOf: SendEmailInput | (() => Promise<SendEmailInput>),
  request: { scope: string; idempotencyKey: string; body: unknown },
  /** Its schedule, read once the key is claimed (a replay answers as stored, whatever the time now). */
  schedule?: () => Schedule | undefined,
): Promise<SentEmail> {
  const claim = await claimKey(deps, request, fingerprint(request.body), newEmailId());
  return sendClaimed(deps, request.scope, claim, async () => {
    const input = typeof inputOf === 'function' ? await inputOf() : inputOf;
    return {
      check: async () => {
        assertAttachmentsAllowed(deps, input);
        await deps.assertSenderDomain(domainOf(input.from.email));
      },
      schedule,
      content: (id) => storedContent(deps, input, id),
    };
  });
}

/** An email to accept once its key is claimed: its checks, its schedule, and how its content is kept. */
export interface ClaimedEmail {
  /** The checks that may refuse it (the sender's domain…): the key is given back when one throws. */
  check(): Promise<void>;
  /** Its schedule, read once checked (a replay answers as stored, whatever the time now). */
  schedule?: () => Schedule | undefined;
  /** Its content as stored under this id (what it keeps in the content store put first). */
  content(id: string): Promise<EmailContent>;
}

/**
 * The work of an idempotent send once its key is claimed (sendEmailOnce above): a replay answers
 * as stored; a resumed key whose email was stored answers it; else the email is made (`make`, only
 * now: a replay reads no template), checked, stored and queued under the claimed id, and the answer
 * kept on the key.
 */
export async function sendClaimed(
  deps: SendEmailDeps & { idempotency: IdempotencyStore },
  scope: string,
  claim: KeyClaim,
  make: () => Promise<ClaimedEmail>,
): Promise<SentEmail> {
  if ('replay' in claim) return claim.replay as SentEmail;
  const { id, resumed, keyHash } = claim;
  let sent: SentEmail;
  let mayBeStored = resumed; // a resumed key's email may have been stored by the request that died
  try {
    const existing = resumed ? await deps.emails.getState(id) : null;
    if (existing) {
      // Stored by the request that died: accepted as it is, whatever the checks (or a template)
      // say now. Queued as a reference, so the consumer sends what was stored, not this request's
      // rendering. A scheduled email is the scheduler's to queue (and the sweeper's, if stranded).
      if (
        existing.status === 'queued' &&
        !existing.sent_at &&
        existing.send_started_at === undefined &&
        !existing.scheduled_at
      )
        await enqueueOrLeaveToSweeper(deps, dueJob(existing, deps.clock.now().getTime()));
      sent = answerOf(existing);
    } else {
      const email = await make();
      await email.check();
      const when = email.schedule?.();
      mayBeStored = true;
      sent = await storeAndQueue(deps, (at) => email.content(at), id, when);
      if (resumed)
        await deps.sweep
          ?.rewind(id)
          .catch((error) =>
            deps.log?.error('could not move the sweeper back to a resumed email', { email_id: id, error }),
          );
    }
  } catch (error) {
    const stored = mayBeStored ? await readBack(deps.emails, id) : null;
    if (stored === null) await deps.idempotency.abandon(scope, keyHash, id).catch(() => undefined);
    if (!stored) throw error;
    sent = answerOf(stored);
  }
  await keepAnswer(deps, scope, claim, sent);
  return sent;
}

/** An idempotent request's key, claimed: a replayed answer, or the id its work goes under. */
export type KeyClaim = { replay: unknown } | { keyHash: string; id: string; resumed: boolean };

/**
 * Claims an Idempotency-Key for a request with this fingerprint, its work to go under `fresh`:
 * the stored answer when it is a repeat, the id of a request that died when it resumes one, and a
 * 409 when another body or a running request holds the key.
 */
export async function claimKey(
  deps: Pick<SendEmailDeps, 'clock' | 'counters'> & { idempotency: IdempotencyStore },
  key: { scope: string; idempotencyKey: string },
  print: string,
  fresh: string,
): Promise<KeyClaim> {
  const keyHash = hashIdempotencyKey(key.idempotencyKey);
  const begin = await deps.idempotency.begin(key.scope, keyHash, print, fresh, deps.clock.now().getTime());
  switch (begin.outcome) {
    case 'replay':
      deps.counters?.count('IdempotentReplays');
      return { replay: begin.response.body };
    case 'mismatch':
      throw idempotencyMismatch();
    case 'in_progress':
      throw idempotencyInProgress();
    case 'resume':
      return { keyHash, id: begin.emailId, resumed: true };
    case 'new':
      return { keyHash, id: fresh, resumed: false };
  }
}

/**
 * Stores a request's answer on its key. The answer stands whatever happens to the key: if storing
 * it fails, the key stays held and a retry after the lease resumes with the same id.
 */
export async function keepAnswer(
  deps: Pick<SendEmailDeps, 'log'> & { idempotency: IdempotencyStore },
  scope: string,
  claim: { keyHash: string; id: string },
  body: unknown,
): Promise<void> {
  try {
    if (!(await deps.idempotency.complete(scope, claim.keyHash, claim.id, { statusCode: 200, body })))
      deps.log?.warn('idempotency key was taken over before this request finished', { email_id: claim.id });
  } catch (error) {
    deps.log?.error('could not store the idempotent answer; a retry resumes', { email_id: claim.id, error });
  }
}

import * as z from 'zod/mini';
import type { DeferredJob, DueJob, QueuedJob, SendJob } from './ports.js';

/**
 * A job travels whole when its message stays within one 64 KB SQS billing chunk (every email of
 * ordinary size: the consumer then reads nothing back); a larger one travels as a reference, its
 * content read back from the table by the consumer. So a message is never larger than this, however
 * large the request was, and never near SQS's 256 KiB limit.
 */
export const JOB_INLINE_MAX_BYTES = 60 * 1024;

/**
 * The queue message for a job (see JOB_INLINE_MAX_BYTES). A scheduled email always travels as a
 * reference with the key that scheduled it: the consumer reads its state anyway (is it due, is the
 * key still there), and its content may be read when it is due rather than when it was accepted.
 */
export function toQueueMessage(job: SendJob | DueJob | DeferredJob): string {
  // A job put back for later carries what its earlier messages used (see QueuedJob).
  const carried = {
    ...('attempts' in job && job.attempts ? { attempts: job.attempts } : {}),
    ...('throttles' in job && job.throttles ? { throttles: job.throttles } : {}),
    ...('unreleased' in job && job.unreleased ? { unreleased: job.unreleased } : {}),
    ...('requeued' in job && job.requeued ? { requeued: true } : {}),
  };
  const reference = () =>
    JSON.stringify({
      id: job.id,
      content: null,
      ...('key_id' in job && job.key_id ? { key_id: job.key_id } : {}),
      ...carried,
    });
  if (job.content === null) return reference();
  const whole = JSON.stringify({ id: job.id, content: job.content, ...carried });
  return Buffer.byteLength(whole) <= JOB_INLINE_MAX_BYTES ? whole : reference();
}

const count = z.optional(z.number().check(z.int(), z.gte(0)));
/** A claim left standing (ports.ts, StandingClaim), and whether the sweeper put the job back. */
const unreleased = z.optional(
  z.object({ started_at: z.number().check(z.int()), mark: z.string().check(z.minLength(1)) }),
);
const requeued = z.optional(z.boolean());

const attachmentSchema = z.object({
  id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  content_disposition: z.enum(['attachment', 'inline']),
  content_id: z.nullable(z.string()),
  size: z.nullable(z.number()),
  path: z.optional(z.string()),
});

/** A send queue message as the send path writes it (see ports.ts, SendJob). */
const sendJobSchema = z.object({
  id: z.string().check(z.minLength(1)),
  attempts: count,
  throttles: count,
  unreleased,
  requeued,
  content: z
    .object({
      from: z.string(),
      // An SMTP email may have Bcc recipients only (issue 42); an API email has at least one To.
      to: z.array(z.string()),
      cc: z.array(z.string()),
      bcc: z.array(z.string()),
      reply_to: z.array(z.string()),
      subject: z.string(),
      html: z.nullable(z.string()),
      text: z.nullable(z.string()),
      // Absent from jobs queued before tags and headers existed.
      tags: z._default(z.array(z.object({ name: z.string(), value: z.string() })), []),
      headers: z._default(z.record(z.string(), z.string()), {}),
      attachments: z.optional(z.array(attachmentSchema)),
      body_key: z.optional(z.string()),
      // The template it was rendered from (its events' webhooks name it).
      template: z.optional(z.object({ id: z.string(), version_id: z.string() })),
      // The topic it is scoped to (the send gate, deliver-gate.ts).
      topic_id: z.optional(z.string()),
      // The broadcast it was fanned out from (issue 41).
      broadcast_id: z.optional(z.string()),
      // An SMTP email's message, kept as MIME and sent as it is (issue 42; content.ts `mime`).
      mime: z.optional(z.object({ key: z.string(), size: z.number(), message_id: z.optional(z.string()) })),
    })
    .check(
      z.refine(
        (content) => content.to.length + content.cc.length + content.bcc.length > 0,
        'an email has at least one recipient',
      ),
    ),
});

const referenceSchema = z.object({
  id: z.string().check(z.minLength(1)),
  content: z.null(),
  key_id: z.optional(z.string()),
  attempts: count,
  throttles: count,
  unreleased,
  requeued,
});

/** What a message carries over from earlier ones of the same job (absent: a first message). */
const carriedOf = ({
  attempts,
  throttles,
  unreleased,
  requeued,
}: Pick<QueuedJob, 'attempts' | 'throttles' | 'unreleased' | 'requeued'>) => ({
  ...(attempts ? { attempts } : {}),
  ...(throttles ? { throttles } : {}),
  ...(unreleased ? { unreleased: { started_at: unreleased.started_at, mark: unreleased.mark } } : {}),
  ...(requeued ? { requeued } : {}),
});

/** The job in a queue message's body; undefined when it is not one (corrupt, or not ours). */
export function parseSendJob(body: string | undefined): QueuedJob | undefined {
  try {
    const json = JSON.parse(body ?? '');
    const reference = referenceSchema.safeParse(json);
    if (reference.success)
      return {
        id: reference.data.id,
        content: null,
        ...(reference.data.key_id ? { key_id: reference.data.key_id } : {}),
        ...carriedOf(reference.data),
      };
    const result = sendJobSchema.safeParse(json);
    if (!result.success) return undefined;
    const { attachments, body_key, topic_id, mime, ...rest } = result.data.content;
    return {
      id: result.data.id,
      content: {
        ...rest,
        ...(attachments ? { attachments } : {}),
        ...(body_key ? { body_key } : {}),
        ...(topic_id ? { topic_id } : {}),
        ...(mime
          ? {
              mime: {
                key: mime.key,
                size: mime.size,
                ...(mime.message_id ? { message_id: mime.message_id } : {}),
              },
            }
          : {}),
      },
      ...carriedOf(result.data),
    };
  } catch {
    return undefined;
  }
}

import {
  ApiError,
  describeFields,
  type FieldError,
  fieldErrorsOf,
  validationError,
} from '../shared/errors.js';
import { decodeBase32, encodeBase32 } from '../shared/ids.js';
import { MAX_BATCH, MAX_EMAIL_BYTES } from '../shared/limits.js';
import { type SendEmailInput, sendEmailSchema, type TemplateUse } from './email.js';
import { loadScheduleReader, parseScheduledAt } from './schedule.js';

export { MAX_BATCH, MAX_BATCH_BODY_BYTES } from '../shared/limits.js';

/**
 * Resend's SDK sends `x-batch-validation`: `strict` (the default) refuses the whole batch when one
 * email is invalid; `permissive` sends the valid ones and names the others.
 */
export type BatchValidation = 'strict' | 'permissive';

export function parseBatchValidation(header: string | undefined): BatchValidation {
  if (header === undefined || header === 'strict') return 'strict';
  if (header === 'permissive') return 'permissive';
  const message = `must be strict or permissive (got "${header.slice(0, 40)}")`;
  throw validationError(`Invalid request: x-batch-validation ${message}`, [
    { field: 'x-batch-validation', message },
  ]);
}

/** Fields a single send will take and a batch never does (Resend refuses them there too). */
const NOT_IN_BATCH: Record<string, string> = {
  attachments: 'attachments are not accepted in a batch; send this email on its own with POST /v1/emails',
};

export interface BatchEntry {
  /** Its position in the request: what its id and any error refer to. */
  index: number;
  /** As given, but `scheduled_at` (when present) already read: ISO UTC. */
  input: SendEmailInput;
}
export interface BatchError {
  index: number;
  message: string;
}

/** Loads what reading the batch's `scheduled_at` times needs (times in words: chrono-node), before parseBatch. */
export const loadBatchScheduleReader = (body: unknown): Promise<void> =>
  loadScheduleReader(
    ...(Array.isArray(body)
      ? body.map((item: unknown) =>
          item && typeof item === 'object' ? (item as { scheduled_at?: unknown }).scheduled_at : undefined,
        )
      : []),
  );

/**
 * The emails of a batch, each checked as `POST /v1/emails` checks one; errors name the email by
 * its index (`3.to`). Strict: any error refuses the batch (400, every error named). Permissive:
 * the valid emails, and an error per invalid one.
 */
export function parseBatch(
  body: unknown,
  mode: BatchValidation,
  /** The request's time, which each email's `scheduled_at` is read against (it becomes ISO UTC). */
  now: Date = new Date(),
  /** Per position, the template it was rendered from, or why it could not be (templates.ts). */
  templates: ReadonlyMap<number, { template: TemplateUse } | { errors: FieldError[] }> = new Map(),
): { entries: BatchEntry[]; errors: BatchError[] } {
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_BATCH) {
    const message = `the body must be a JSON array of 1 to ${MAX_BATCH} emails${
      Array.isArray(body) ? ` (got ${body.length})` : ''
    }`;
    throw validationError(`Invalid request: ${message}`, [{ field: '(body)', message }]);
  }
  const entries: BatchEntry[] = [];
  const errors: BatchError[] = [];
  const fields: FieldError[] = [];
  body.forEach((item: unknown, index) => {
    const own: FieldError[] = [];
    const bytes = Buffer.byteLength(JSON.stringify(item) ?? '');
    if (bytes > MAX_EMAIL_BYTES)
      own.push({
        field: String(index),
        message: `this email is ${bytes} bytes of JSON; each email may be at most ${MAX_EMAIL_BYTES} bytes`,
      });
    if (item && typeof item === 'object' && !Array.isArray(item))
      for (const [field, message] of Object.entries(NOT_IN_BATCH))
        if (field in item) own.push({ field: `${index}.${field}`, message });
    const rest =
      own.length && item && typeof item === 'object'
        ? Object.fromEntries(Object.entries(item).filter(([key]) => !(key in NOT_IN_BATCH)))
        : item;
    const applied = templates.get(index);
    if (applied && 'errors' in applied) own.push(...applied.errors);
    const result = applied && 'errors' in applied ? undefined : sendEmailSchema.safeParse(rest);
    if (result && !result.success)
      own.push(...fieldErrorsOf(result.error.issues as Parameters<typeof fieldErrorsOf>[0], [index]));
    let input: SendEmailInput | undefined = result?.success
      ? { ...result.data, ...(applied && 'template' in applied ? { template: applied.template } : {}) }
      : undefined;
    if (input?.scheduled_at !== undefined) {
      try {
        input = {
          ...input,
          scheduled_at: parseScheduledAt(input.scheduled_at, now, `${index}.scheduled_at`),
        };
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        own.push(...(error.fieldErrors ?? []));
      }
    }
    if (own.length) {
      fields.push(...own);
      errors.push({ index, message: describeFields(own) });
    } else if (input) entries.push({ index, input });
  });
  if (mode === 'strict' && fields.length)
    throw validationError(`Invalid request: ${describeFields(fields)}`, fields);
  return { entries, errors };
}

/**
 * The ids of a batch's emails, one per position, from the batch's first id: consecutive, so they
 * sort in input order and a resumed request finds the same ids again (see sendBatchOnce).
 */
export function batchIds(firstId: string, count: number): string[] {
  const [prefix, suffix] = [firstId.slice(0, firstId.indexOf('_')), firstId.slice(firstId.indexOf('_') + 1)];
  const first = decodeBase32(suffix);
  return Array.from({ length: count }, (_, i) => `${prefix}_${encodeBase32(toBytes(first + BigInt(i)))}`);
}

const toBytes = (value: bigint) => {
  const bytes = new Uint8Array(16);
  let rest = value;
  for (let i = 15; i >= 0; i--) {
    bytes[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return bytes;
};

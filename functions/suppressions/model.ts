import * as z from 'zod/mini';
import { address } from '../shared/email-fields.js';
import { newId } from '../shared/ids.js';
import { pageQuerySchema, pageShape } from '../shared/list.js';
import { SUPPRESSION_ORIGINS, type Suppression } from './ports.js';

/**
 * The suppression list: addresses never mailed again until removed. A permanent bounce or a
 * complaint adds one (by the SES events consumer), a user adds one by hand; the send consumer
 * leaves them out of every send. One list per service, as Resend keeps one per account.
 */
export const SUPPRESSION_ID_PREFIX = 'sup';
export const newSuppressionId = (): string => newId(SUPPRESSION_ID_PREFIX);

/** Batch add and remove take at most this many, as Resend's do. */
export const MAX_SUPPRESSION_BATCH = 100;

/** An address as the list keeps it: the bare address, lower-cased (`Name <A@B.com>` → `a@b.com`). */
const listedAddress = z.pipe(
  address,
  z.transform((parsed) => parsed.email.toLowerCase()),
);

const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

export const addSuppressionSchema = z.strictObject({ email: listedAddress }, bodyError);

const batchOf = <T extends z.ZodMiniType>(item: T, what: string) =>
  z
    .array(item, { error: `${what} must be a list` })
    .check(
      z.refine(
        (list) => list.length >= 1 && list.length <= MAX_SUPPRESSION_BATCH,
        `${what} must list 1 to ${MAX_SUPPRESSION_BATCH} entries`,
      ),
    )
    .register(z.globalRegistry, { minItems: 1, maxItems: MAX_SUPPRESSION_BATCH });

export const batchAddSuppressionsSchema = z.strictObject(
  { emails: batchOf(listedAddress, 'emails') },
  bodyError,
);

/** `{emails}` or `{ids}`, not both (the SDK's two forms). */
export const batchRemoveSuppressionsSchema = z
  .strictObject(
    {
      emails: z.optional(batchOf(listedAddress, 'emails')),
      ids: z.optional(batchOf(z.string({ error: 'must be a suppression id (sup_…)' }), 'ids')),
    },
    bodyError,
  )
  .check(
    z.superRefine((body, ctx) => {
      if ((body.emails === undefined) === (body.ids === undefined))
        ctx.issues.push({
          code: 'custom',
          path: ['emails'],
          message: 'give either emails or ids',
          input: body,
        });
    }),
  )
  .register(z.globalRegistry, { oneOf: [{ required: ['emails'] }, { required: ['ids'] }] });

export const listSuppressionsQuerySchema = pageQuerySchema({
  ...pageShape(SUPPRESSION_ID_PREFIX),
  origin: z.optional(
    z.enum(SUPPRESSION_ORIGINS, { error: `origin must be one of ${SUPPRESSION_ORIGINS.join(', ')}` }),
  ),
});

/** How the API shows an entry (Resend's suppression object). */
export const toSuppressionBody = (entry: Suppression) => ({
  object: 'suppression' as const,
  id: entry.id,
  email: entry.email,
  origin: entry.origin,
  source_id: entry.source_id,
  created_at: entry.created_at,
});

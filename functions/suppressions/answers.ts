import * as z from 'zod/mini';
import { named, timestamp } from '../shared/answers.js';
import { SUPPRESSION_ORIGINS } from './ports.js';

/**
 * The suppression routes' answers (shared/answers.ts says how answers are described).
 */

const suppressionShape = {
  id: z.string(),
  email: z.string(),
  origin: z.enum(SUPPRESSION_ORIGINS),
  source_id: z.nullable(z.string()).register(z.globalRegistry, {
    description: 'The email whose bounce or complaint put the address there; null when added by hand.',
  }),
  created_at: timestamp,
};

export const suppressionSchema = named(
  'Suppression',
  z.object({ object: z.literal('suppression'), ...suppressionShape }),
  'An address on the suppression list: never mailed again until it is taken off.',
);

export const suppressionListItemSchema = named(
  'SuppressionListItem',
  z.object(suppressionShape),
  'An address on the suppression list, as listed.',
);

/** `DELETE /v1/suppressions/{id}`: the removal, with the address. */
export const suppressionRemovedSchema = z.object({
  object: z.literal('suppression'),
  id: z.string(),
  email: z.string(),
  deleted: z.literal(true),
});

export const suppressionsAddedSchema = z.object({
  data: z.array(
    z.object({
      object: z.literal('suppression'),
      id: z.string(),
      email: z.string(),
      origin: z.enum(SUPPRESSION_ORIGINS),
      added: z.boolean(),
    }),
  ),
});

export const suppressionsRemovedSchema = z.object({
  data: z.array(
    z.object({
      object: z.literal('suppression'),
      id: z.nullable(z.string()),
      email: z.nullable(z.string()),
      deleted: z.boolean(),
    }),
  ),
});

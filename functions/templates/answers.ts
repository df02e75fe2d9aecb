import * as z from 'zod/mini';
import { addressArray, named, reference, timestamp } from '../shared/answers.js';
import type { TemplateStatus } from './model.js';
import { VARIABLE_TYPES } from './render.js';

/**
 * The template routes' answers (shared/answers.ts says how answers are described).
 */

export const templateVariableSchema = named(
  'TemplateVariable',
  z.object({
    id: z.string(),
    key: z.string(),
    type: z.enum(VARIABLE_TYPES),
    fallback_value: z.optional(z.unknown()).register(z.globalRegistry, {
      description: "Free-form: the value used when a send gives none, of the variable's type.",
    }),
    created_at: timestamp,
    updated_at: timestamp,
  }),
  'A variable a template declares.',
);

const templateStatus = z.enum(['draft', 'published'] as const satisfies readonly TemplateStatus[]);

export const templateSchema = named(
  'Template',
  z.object({
    object: z.literal('template'),
    id: z.string(),
    current_version_id: z.string(),
    name: z.string(),
    alias: z.optional(z.string()),
    from: z.optional(z.string()),
    subject: z.optional(z.string()),
    reply_to: z.nullable(addressArray),
    html: z.string(),
    text: z.optional(z.string()),
    variables: z.array(templateVariableSchema),
    created_at: timestamp,
    updated_at: timestamp,
    status: templateStatus,
    published_at: z.nullable(timestamp),
    has_unpublished_versions: z.boolean(),
  }),
  "A template (Resend's object), its current version. What it does not have is left out (`alias`, `from`, `subject`, `text`).",
);

export const templateListItemSchema = named(
  'TemplateListItem',
  z.object({
    id: z.string(),
    name: z.string(),
    status: templateStatus,
    published_at: z.nullable(timestamp),
    alias: z.optional(z.string()),
    created_at: timestamp,
    updated_at: timestamp,
  }),
  'A template as listed.',
);

export const templateReferenceSchema = reference('template');

/**
 * Templates, as Resend has them: a name, an optional alias (unique), the parts of an email (from,
 * subject, reply_to, html, text) with `{{{NAME}}}` variables, and the variables declared. Editing
 * changes the current version; sends use the published one until the next publish. Nothing here
 * knows where templates are kept (adapters/dynamodb/template-repository.ts).
 */
import * as z from 'zod/mini';
import { formatAddress } from '../shared/address.js';
import { address, MAX_SUBJECT_CHARS } from '../shared/email-fields.js';
import { pageQuerySchema, pageShape } from '../shared/list.js';
import {
  checkTemplate,
  MAX_TEMPLATE_VARIABLES,
  type TemplateVariableInput,
  VARIABLE_TYPES,
  type VariableType,
} from './render.js';

export const TEMPLATE_ID_PREFIX = 'tpl';
export const TEMPLATE_VERSION_PREFIX = 'tplv';
export const TEMPLATE_VARIABLE_PREFIX = 'tvar';

/** An alias: what a send or a read may name the template by instead of its id. */
export const ALIAS = /^[a-z0-9][a-z0-9._-]{0,99}$/i;
export const MAX_TEMPLATE_NAME_CHARS = 200;

export interface TemplateVariable {
  id: string;
  key: string;
  type: VariableType;
  fallback_value?: unknown;
  created_at: string;
  updated_at: string;
}

/** The parts of an email a template gives a send. */
export interface TemplateContent {
  from?: string;
  subject?: string;
  reply_to: string[];
  html: string;
  text?: string;
  variables: TemplateVariable[];
}

export type TemplateStatus = 'draft' | 'published';

export interface Template extends TemplateContent {
  id: string;
  name: string;
  alias?: string;
  created_at: string;
  updated_at: string;
  /** The version being edited (the published one until it is edited). */
  current_version_id: string;
  /** `published` once any version was published (sends use that one). */
  status: TemplateStatus;
  published_at: string | null;
  /** The current version is not the published one. */
  has_unpublished_versions: boolean;
  /** Bumped by every write, so two writers cannot overwrite each other. */
  version?: number;
}

/** The version sends use, as it was published. */
export interface PublishedTemplate extends TemplateContent {
  id: string;
  version_id: string;
  published_at: string;
}

const name = z.string({ error: 'must be a string' }).check(
  z.refine((s) => s.trim().length > 0, 'must not be empty'),
  z.refine(
    (s) => [...s].length <= MAX_TEMPLATE_NAME_CHARS,
    `may be at most ${MAX_TEMPLATE_NAME_CHARS} characters`,
  ),
);
const alias = z.string({ error: 'must be a string' }).check(
  z.refine(
    (s) => ALIAS.test(s),
    'must be 1 to 100 letters, digits, dots, hyphens or underscores, starting with a letter or digit (like "welcome-email")',
  ),
  z.refine(
    (s) => !s.startsWith(`${TEMPLATE_ID_PREFIX}_`),
    `must not start with "${TEMPLATE_ID_PREFIX}_" (ids do)`,
  ),
);
const fromAddress = z.pipe(
  address,
  z.transform((parsed) => formatAddress(parsed)),
);
const subject = z.string({ error: 'must be a string' }).check(
  z.refine((s) => [...s].length <= MAX_SUBJECT_CHARS, `may be at most ${MAX_SUBJECT_CHARS} characters`),
  z.refine((s) => !/[\r\n]/.test(s), 'must not contain line breaks'),
);
/** Resend takes one address or a list. */
const replyTo = z.pipe(
  z.union(
    [
      z.pipe(
        address,
        z.transform((a) => [a]),
      ),
      z.array(address),
    ],
    {
      error: 'must be an email address or a list of email addresses',
    },
  ),
  z.transform((list) => list.map(formatAddress)),
);
const variable = z.strictObject({
  key: z.string({ error: 'must be a string' }),
  type: z.enum(VARIABLE_TYPES, { error: `must be one of ${VARIABLE_TYPES.join(', ')}` }),
  fallback_value: z.optional(
    z.unknown().register(z.globalRegistry, {
      description: "The value used when a send gives none: of the variable's type.",
      anyOf: [
        { type: 'string' },
        { type: 'number' },
        { type: 'boolean' },
        { type: 'object' },
        { type: 'array' },
        { type: 'null' },
      ],
    }),
  ),
});
const variables = z
  .array(variable, { error: 'must be a list of {key, type, fallback_value}' })
  .check(
    z.maxLength(MAX_TEMPLATE_VARIABLES, `a template may declare at most ${MAX_TEMPLATE_VARIABLES} variables`),
  );

/** Resend's SDK types these `string | null`: null is "none" (on a change: remove it). */
const parts = {
  from: z.optional(z.nullable(fromAddress)),
  subject: z.optional(z.nullable(subject)),
  reply_to: z.optional(z.nullable(replyTo)),
  html: z.string({ error: 'html is required and must be a string' }),
  text: z.optional(z.nullable(z.string({ error: 'must be a string' }))),
  variables: z.optional(variables),
};

/** `POST /v1/templates`, Resend's body: `name` and `html` required. */
export const createTemplateSchema = z.strictObject({ name, alias: z.optional(z.nullable(alias)), ...parts });
export type CreateTemplateInput = z.output<typeof createTemplateSchema>;

/** `PATCH /v1/templates/{id}`: every field optional; what is left out stays. */
export const updateTemplateSchema = z.strictObject({
  name: z.optional(name),
  alias: z.optional(z.nullable(alias)),
  ...parts,
  html: z.optional(z.string({ error: 'must be a string' })),
});
export type UpdateTemplateInput = z.output<typeof updateTemplateSchema>;

export const listTemplatesQuerySchema = pageQuerySchema(pageShape(TEMPLATE_ID_PREFIX));

/** The declared variables with their ids and times: kept for a key that stays, new for a new key. */
export function withVariableIds(
  declared: readonly TemplateVariableInput[],
  before: readonly TemplateVariable[],
  now: string,
  newId: () => string,
): TemplateVariable[] {
  return declared.map((v) => {
    const old = before.find((b) => b.key === v.key);
    const same =
      old && old.type === v.type && JSON.stringify(old.fallback_value) === JSON.stringify(v.fallback_value);
    return {
      id: old?.id ?? newId(),
      key: v.key,
      type: v.type,
      ...(v.fallback_value === undefined || v.fallback_value === null
        ? {}
        : { fallback_value: v.fallback_value }),
      created_at: old?.created_at ?? now,
      updated_at: same ? (old?.updated_at ?? now) : now,
    };
  });
}

/** Field errors of a template's parts and variables (renderer rules), [] when it can be saved. */
export const templateProblems = (
  content: Pick<TemplateContent, 'subject' | 'html' | 'text'>,
  declared: readonly TemplateVariableInput[],
) =>
  checkTemplate(
    { subject: content.subject ?? null, html: content.html, text: content.text ?? null },
    declared,
  );

/**
 * The API's view: Resend's template object. Where Resend's document says string, a value the
 * template does not have is left out (`alias`, `from`, `subject`, `text`); `reply_to` and
 * `published_at` are null there, as Resend's document allows.
 */
export const toTemplateBody = (t: Template) => ({
  object: 'template' as const,
  id: t.id,
  current_version_id: t.current_version_id,
  name: t.name,
  ...(t.alias ? { alias: t.alias } : {}),
  ...(t.from ? { from: t.from } : {}),
  ...(t.subject !== undefined ? { subject: t.subject } : {}),
  reply_to: t.reply_to.length ? t.reply_to : null,
  html: t.html,
  ...(t.text !== undefined ? { text: t.text } : {}),
  variables: t.variables.map((v) => ({
    id: v.id,
    key: v.key,
    type: v.type,
    ...(v.fallback_value === undefined ? {} : { fallback_value: v.fallback_value }),
    created_at: v.created_at,
    updated_at: v.updated_at,
  })),
  created_at: t.created_at,
  updated_at: t.updated_at,
  status: t.status,
  published_at: t.published_at,
  has_unpublished_versions: t.has_unpublished_versions,
});

/** A template as listed. */
export const toTemplateListItem = (t: Template) => ({
  id: t.id,
  name: t.name,
  status: t.status,
  published_at: t.published_at,
  ...(t.alias ? { alias: t.alias } : {}),
  created_at: t.created_at,
  updated_at: t.updated_at,
});

/** What a send names: `template: {id (or alias), variables}`. */
export const templateRefSchema = z.strictObject({
  id: z
    .string({ error: 'template.id is required: the id or alias of a published template' })
    .check(z.minLength(1, 'template.id must not be empty')),
  variables: z.optional(
    z
      .record(z.string(), z.unknown(), { error: 'template.variables must be an object of {NAME: value}' })
      .register(z.globalRegistry, {
        description:
          "The values of the template's variables by key: strings, numbers, booleans, objects or lists, as each is declared.",
      }),
  ),
});
export type TemplateRef = z.output<typeof templateRefSchema>;

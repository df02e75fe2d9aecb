import { describeFields, type FieldError, fieldErrorsOf, validationError } from '../shared/errors.js';
import { isId } from '../shared/ids.js';
import { MAX_BATCH, MAX_EMAIL_BYTES, MAX_SEND_REQUEST_BYTES } from '../shared/limits.js';
import {
  type PublishedTemplate,
  TEMPLATE_ID_PREFIX,
  type TemplateRef,
  templateRefSchema,
} from '../templates/model.js';
import type { TemplateRepository } from '../templates/ports.js';
import { renderTemplate } from '../templates/render.js';
import type { TemplateUse } from './email.js';
import { namesTemplate } from './names-template.js';

/**
 * A send by template: its published version rendered into the send's body, once, when the email is
 * accepted (its content is then what was rendered). Loaded on first use (accept-send.ts): a send
 * without a template loads none of it, nor the templates' rendering.
 */

/** A body's `template`, checked; errors named under `prefix` (`3.` in a batch). */
function refOf(
  body: Record<string, unknown>,
  prefix: string,
): { ref: TemplateRef } | { errors: FieldError[] } {
  const parsed = templateRefSchema.safeParse(body.template);
  if (parsed.success) return { ref: parsed.data };
  const errors = fieldErrorsOf(parsed.error.issues as Parameters<typeof fieldErrorsOf>[0], []).map((e) => ({
    ...e,
    field: `${prefix}template${e.field && e.field !== '(body)' ? `.${e.field}` : ''}`,
  }));
  return { errors };
}

/**
 * `POST /v1/emails` with `template`: the body with the template rendered into it, and what it
 * used; a body without one as it is. A problem is a 400 naming it.
 */
export async function applySendTemplate(
  deps: { templates: TemplateRepository },
  body: unknown,
): Promise<{ body: unknown; template?: TemplateUse }> {
  if (!namesTemplate(body)) return { body };
  const applied = await applyTemplate(deps, body);
  if ('errors' in applied)
    throw validationError(`Invalid request: ${describeFields(applied.errors)}`, applied.errors);
  return applied;
}

/**
 * `POST /v1/emails/batch`: each email with `template` rendered (each template read once), and per
 * position what it used or why it cannot be sent (the batch's mode decides what that does).
 */
export async function applyBatchTemplates(
  deps: { templates: TemplateRepository },
  body: unknown,
): Promise<{ body: unknown; templates: Map<number, { template: TemplateUse } | { errors: FieldError[] }> }> {
  const templates = new Map<number, { template: TemplateUse } | { errors: FieldError[] }>();
  // Not a batch parseBatch takes (it says why): nothing read for it.
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_BATCH || !body.some(namesTemplate))
    return { body, templates };
  const cached = cachedTemplates(deps.templates);
  const rendered = await Promise.all(
    body.map(async (item: unknown, index) => {
      if (!namesTemplate(item)) return item;
      const applied = await applyTemplate({ templates: cached }, item, `${index}.`, MAX_EMAIL_BYTES);
      if ('errors' in applied) {
        templates.set(index, applied);
        return item;
      }
      templates.set(index, { template: applied.template });
      return applied.body;
    }),
  );
  return { body: rendered, templates };
}

/** The repository's reads a batch makes, each template read once however many emails name it. */
function cachedTemplates(
  templates: TemplateRepository,
): Pick<TemplateRepository, 'idOfAlias' | 'published' | 'get'> {
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>) => {
    if (!memo.has(key)) memo.set(key, read());
    return memo.get(key) as Promise<T>;
  };
  return {
    idOfAlias: (alias) => once(`a:${alias}`, () => templates.idOfAlias(alias)),
    published: (id) => once(`p:${id}`, () => templates.published(id)),
    get: (id) => once(`g:${id}`, () => templates.get(id)),
  };
}

/**
 * A send's `template: {id, variables}` applied to its body: the published version rendered with
 * the values (once, now: the email's content is what was rendered), `from`, `subject` and
 * `reply_to` taken from the template where the body has none. Errors are 400s naming the field
 * (`template.id`, `template.variables.NAME`, `html`); `prefix` names the email in a batch (`3.`).
 */
export async function applyTemplate(
  deps: { templates: Pick<TemplateRepository, 'idOfAlias' | 'published' | 'get'> },
  body: Record<string, unknown>,
  prefix = '',
  /** The most the rendered bodies may be: a single send's, or a batch email's. */
  maxBytes = MAX_SEND_REQUEST_BYTES,
): Promise<{ body: Record<string, unknown>; template: TemplateUse } | { errors: FieldError[] }> {
  const checked = refOf(body, prefix);
  if ('errors' in checked) return checked;
  const { ref } = checked;
  const field = (name: string) => `${prefix}${name}`;
  const clash = ['html', 'text'].filter((key) => body[key] !== undefined);
  if (clash.length)
    return {
      errors: clash.map((key) => ({
        field: field(key),
        message: `${key} and template are exclusive: a template gives the bodies`,
      })),
    };
  const id = isId(TEMPLATE_ID_PREFIX, ref.id) ? ref.id : await deps.templates.idOfAlias(ref.id);
  const published = id ? await deps.templates.published(id) : null;
  if (!published) {
    const exists = id ? await deps.templates.get(id) : null;
    const message = exists
      ? `template ${JSON.stringify(ref.id)} has no published version: publish it (POST /v1/templates/${exists.id}/publish) before sending with it`
      : `template ${JSON.stringify(ref.id)} does not exist (an id or alias of a published template)`;
    return { errors: [{ field: field('template.id'), message }] };
  }
  // The template's subject only where it is used: a body's own subject replaces it.
  const used = body.subject === undefined ? published : { ...published, subject: undefined };
  const rendered = render(used, ref.variables ?? {}, prefix, maxBytes);
  if ('errors' in rendered) return rendered;
  const { template: _, ...rest } = body;
  return {
    body: {
      ...rest,
      ...(rest.from === undefined && published.from ? { from: published.from } : {}),
      ...(rest.subject === undefined && rendered.subject !== undefined ? { subject: rendered.subject } : {}),
      ...(rest.reply_to === undefined && published.reply_to.length ? { reply_to: published.reply_to } : {}),
      html: rendered.html,
      ...(rendered.text !== undefined ? { text: rendered.text } : {}),
    },
    template: { id: published.id, version_id: published.version_id },
  };
}

function render(
  published: PublishedTemplate,
  values: Record<string, unknown>,
  prefix: string,
  maxBytes: number,
) {
  const result = renderTemplate(
    { subject: published.subject ?? null, html: published.html, text: published.text ?? null },
    published.variables.map(({ key, type, fallback_value }) => ({ key, type, fallback_value })),
    values,
    maxBytes,
  );
  if (!result.ok) return { errors: result.errors.map((e) => ({ ...e, field: `${prefix}${e.field}` })) };
  return result;
}

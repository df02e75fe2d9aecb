import type { FieldError } from '../shared/errors.js';
import type { TemplateDeps } from '../templates/templates.js';
import type { TemplateUse } from './email.js';

/**
 * The send functions' use of templates (templates.ts, and the rendering of variables), loaded by
 * the first request that names a `template`: a send without one loads none of it.
 */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a send's body names a `template` (and so loads the template code). */
export const namesTemplate = (body: unknown): body is Record<string, unknown> =>
  isObject(body) && body.template !== undefined;

/** `POST /v1/emails`: see templates.ts, applySendTemplate. */
export async function applySendTemplate(
  deps: Pick<TemplateDeps, 'templates'>,
  body: unknown,
): Promise<{ body: unknown; template?: TemplateUse }> {
  if (!namesTemplate(body)) return { body };
  return (await import('../templates/templates.js')).applySendTemplate(deps, body);
}

/** `POST /v1/emails/batch`: see templates.ts, applyBatchTemplates. */
export async function applyBatchTemplates(
  deps: Pick<TemplateDeps, 'templates'>,
  body: unknown,
): Promise<{ body: unknown; templates: Map<number, { template: TemplateUse } | { errors: FieldError[] }> }> {
  if (!Array.isArray(body) || !body.some(namesTemplate)) return { body, templates: new Map() };
  return (await import('../templates/templates.js')).applyBatchTemplates(deps, body);
}

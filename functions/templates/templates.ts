import { conflict, notFound, validationError } from '../shared/errors.js';
import { isId, newId } from '../shared/ids.js';
import { AGAIN, optimistically } from '../shared/optimistic.js';
import type { Clock } from '../shared/ports.js';
import {
  type CreateTemplateInput,
  TEMPLATE_ID_PREFIX,
  TEMPLATE_VARIABLE_PREFIX,
  TEMPLATE_VERSION_PREFIX,
  type Template,
  type TemplateContent,
  templateProblems,
  type UpdateTemplateInput,
  withVariableIds,
} from './model.js';
import type { TemplateRepository } from './ports.js';
import type { TemplateVariableInput } from './render.js';

export interface TemplateDeps {
  templates: TemplateRepository;
  clock: Clock;
}

/**
 * What a template may hold in all (HTML, text, subject and the variables' fallbacks, before
 * deflating): its current version and its published one each fit their table item (400 KB).
 */
export const MAX_TEMPLATE_BYTES = 350 * 1024;

/** The template's definition checked: a 400 naming every problem, or nothing. */
function assertValid(
  content: Pick<TemplateContent, 'subject' | 'html' | 'text'>,
  declared: readonly TemplateVariableInput[],
) {
  const size =
    Buffer.byteLength(content.html) +
    Buffer.byteLength(content.text ?? '') +
    Buffer.byteLength(content.subject ?? '') +
    Buffer.byteLength(JSON.stringify(declared));
  if (size > MAX_TEMPLATE_BYTES) {
    const message = `the template would hold ${Math.ceil(size / 1024)} KB; a template's html, text, subject and variables may be at most ${MAX_TEMPLATE_BYTES / 1024} KB together`;
    throw validationError(message, [{ field: 'html', message }]);
  }
  const problems = templateProblems(content, declared);
  if (problems.length)
    throw validationError(`Invalid template: ${problems.map((p) => p.message).join('; ')}`, problems);
}

const aliasTaken = (alias: string, id: string) =>
  conflict(
    `The alias "${alias}" is taken by template ${id}; choose another, or change that template's first.`,
  );

/** `POST /v1/templates`: a draft (sends need it published), its alias claimed first. */
export async function createTemplate(deps: TemplateDeps, input: CreateTemplateInput): Promise<Template> {
  const declared = input.variables ?? [];
  assertValid(
    { html: input.html, subject: input.subject ?? undefined, text: input.text ?? undefined },
    declared,
  );
  const id = newId(TEMPLATE_ID_PREFIX);
  const now = deps.clock.now().toISOString();
  const template: Template = {
    id,
    name: input.name,
    ...(input.alias ? { alias: input.alias } : {}),
    ...(input.from ? { from: input.from } : {}),
    ...(input.subject != null ? { subject: input.subject } : {}),
    reply_to: input.reply_to ?? [],
    html: input.html,
    ...(input.text != null ? { text: input.text } : {}),
    variables: withVariableIds(declared, [], now, () => newId(TEMPLATE_VARIABLE_PREFIX)),
    created_at: now,
    updated_at: now,
    current_version_id: newId(TEMPLATE_VERSION_PREFIX),
    status: 'draft',
    published_at: null,
    has_unpublished_versions: true,
  };
  if (input.alias) {
    const claim = await deps.templates.claimAlias(input.alias, id, deps.clock.now().getTime());
    if (!claim.claimed) throw aliasTaken(input.alias, claim.id);
  }
  // If this fails, the alias is held for a template that does not exist: the next claim takes it.
  await deps.templates.save(template, 'new');
  return template;
}

/** A template by id, or by alias. */
export async function findTemplate(
  deps: Pick<TemplateDeps, 'templates'>,
  idOrAlias: string,
): Promise<Template> {
  const byId = isId(TEMPLATE_ID_PREFIX, idOrAlias);
  const id = byId ? idOrAlias : await deps.templates.idOfAlias(idOrAlias);
  const template = id ? await deps.templates.get(id) : null;
  // An alias item left behind by a change that died before freeing it names a template that has
  // another alias now: not this one's.
  if (!template || (!byId && template.alias?.toLowerCase() !== idOrAlias.toLowerCase()))
    throw notFound(`Template ${JSON.stringify(idOrAlias)} not found.`);
  return template;
}

const contentChanged = (a: TemplateContent, b: TemplateContent) =>
  a.html !== b.html ||
  a.text !== b.text ||
  a.subject !== b.subject ||
  a.from !== b.from ||
  JSON.stringify(a.reply_to) !== JSON.stringify(b.reply_to) ||
  JSON.stringify(a.variables.map(({ key, type, fallback_value }) => [key, type, fallback_value])) !==
    JSON.stringify(b.variables.map(({ key, type, fallback_value }) => [key, type, fallback_value]));

/**
 * `PATCH /v1/templates/{id}`: what is given changes; a change of content makes a new current
 * version (a published template keeps sending its published one: `has_unpublished_versions`).
 */
export async function updateTemplate(
  deps: TemplateDeps,
  idOrAlias: string,
  input: UpdateTemplateInput,
): Promise<Template> {
  let found = idOrAlias;
  return optimistically(
    () => `Template ${found}`,
    async () => {
      const current = await findTemplate(deps, idOrAlias);
      found = current.id;
      const now = deps.clock.now().toISOString();
      const declared =
        input.variables ??
        current.variables.map(({ key, type, fallback_value }) => ({ key, type, fallback_value }));
      // Left out: kept; null (as the SDK's types allow): cleared.
      const kept = <K extends 'from' | 'subject' | 'text'>(key: K) => {
        const value = input[key] === undefined ? current[key] : input[key];
        return value == null ? {} : ({ [key]: value } as { [P in K]: string });
      };
      const content: TemplateContent = {
        ...kept('from'),
        ...kept('subject'),
        reply_to: input.reply_to === undefined ? current.reply_to : (input.reply_to ?? []),
        html: input.html ?? current.html,
        ...kept('text'),
        variables: withVariableIds(declared, current.variables, now, () => newId(TEMPLATE_VARIABLE_PREFIX)),
      };
      assertValid(content, declared);
      const changed = contentChanged(current, content);
      const alias = input.alias === undefined ? current.alias : (input.alias ?? undefined);
      const { from: _f, subject: _s, text: _t, alias: _a, ...unchanged } = current;
      const next: Template = {
        ...unchanged,
        ...content,
        name: input.name ?? current.name,
        ...(alias ? { alias } : {}),
        updated_at: now,
        ...(changed
          ? { current_version_id: newId(TEMPLATE_VERSION_PREFIX), has_unpublished_versions: true }
          : {}),
      };
      // Aliases are one whatever their case: `Welcome` to `welcome` keeps the same one.
      const newAlias =
        input.alias != null && input.alias.toLowerCase() !== current.alias?.toLowerCase()
          ? input.alias
          : undefined;
      if (newAlias) {
        const claim = await deps.templates.claimAlias(newAlias, current.id, deps.clock.now().getTime());
        if (!claim.claimed) throw aliasTaken(newAlias, claim.id);
      }
      if (await deps.templates.save(next, 'existing')) {
        if ((newAlias || input.alias === null) && current.alias)
          await deps.templates.releaseAlias(current.alias, current.id).catch(() => undefined);
        return { ...next, version: (current.version ?? 0) + 1 };
      }
      // Changed by another request meanwhile: apply this change to theirs (or 404, deleted).
      if (newAlias) await deps.templates.releaseAlias(newAlias, current.id).catch(() => undefined);
      return AGAIN;
    },
  );
}

/** `POST /v1/templates/{id}/publish`: the current version becomes the one sends use. */
export async function publishTemplate(deps: TemplateDeps, idOrAlias: string): Promise<Template> {
  let found = idOrAlias;
  return optimistically(
    () => `Template ${found}`,
    async () => {
      const current = await findTemplate(deps, idOrAlias);
      found = current.id;
      const now = deps.clock.now().toISOString();
      const { id, from, subject, reply_to, html, text, variables, current_version_id } = current;
      // The version first, then the template saying so: a template never says published before it is.
      const put = await deps.templates.putPublished(current.version ?? 0, {
        id,
        ...(from ? { from } : {}),
        ...(subject !== undefined ? { subject } : {}),
        reply_to,
        html,
        ...(text !== undefined ? { text } : {}),
        variables,
        version_id: current_version_id,
        published_at: now,
      });
      // Deleted meanwhile (404 on the next read), or a newer read was published: read again.
      if (!put) return AGAIN;
      const next: Template = {
        ...current,
        status: 'published',
        published_at: now,
        updated_at: now,
        has_unpublished_versions: false,
      };
      if (await deps.templates.save(next, 'existing'))
        return { ...next, version: (current.version ?? 0) + 1 };
      // Edited meanwhile: publish what it is now.
      return AGAIN;
    },
  );
}

/** `POST /v1/templates/{id}/duplicate`: a new draft with the current version's content, no alias. */
export async function duplicateTemplate(deps: TemplateDeps, idOrAlias: string): Promise<Template> {
  const source = await findTemplate(deps, idOrAlias);
  return createTemplate(deps, {
    // Room kept for the suffix, cut by characters (not in the middle of one).
    name: `${[...source.name].slice(0, 193).join('')} (copy)`,
    ...(source.from ? { from: source.from } : {}),
    ...(source.subject !== undefined ? { subject: source.subject } : {}),
    ...(source.reply_to.length ? { reply_to: source.reply_to } : {}),
    html: source.html,
    ...(source.text !== undefined ? { text: source.text } : {}),
    variables: source.variables.map(({ key, type, fallback_value }) => ({ key, type, fallback_value })),
  } as CreateTemplateInput);
}

/** `DELETE /v1/templates/{id}`: emails already accepted keep what was rendered for them. */
export async function deleteTemplate(deps: TemplateDeps, idOrAlias: string): Promise<Template> {
  const template = await findTemplate(deps, idOrAlias);
  await deps.templates.delete(template, deps.clock.now().getTime());
  return template;
}

/**
 * A template as the console's form holds it (text in fields), the API body made from it, and its
 * preview: rendered here, in the browser, by the service's own renderer (functions/templates/render.ts),
 * so the preview fills `{{{NAME}}}` exactly as a send would (HTML-escaped in the HTML, as is in the
 * subject and text). Sample values live in the page only: the API keeps no such thing.
 */
import {
  checkTemplate,
  renderTemplate,
  type TemplateVariableInput,
  usedVariables,
  type VariableType,
} from '../../functions/templates/render.js';
import type { Template } from './answers.js';

export interface VariableRow {
  key: string;
  type: VariableType;
  /** The fallback value as typed: a string as is, other types as JSON (`42`, `true`, `{"a":1}`). */
  fallback: string;
  /** The value the preview uses, typed the same way; empty for the fallback. */
  sample: string;
}

export interface TemplateForm {
  name: string;
  alias: string;
  from: string;
  subject: string;
  replyTo: string;
  html: string;
  text: string;
  variables: VariableRow[];
}

export const emptyForm = (): TemplateForm => ({
  name: '',
  alias: '',
  from: '',
  subject: '',
  replyTo: '',
  html: '',
  text: '',
  variables: [],
});

const asText = (value: unknown, type: VariableType) =>
  value === undefined || value === null ? '' : type === 'string' ? String(value) : JSON.stringify(value);

/** The form of a template the API answered (with the samples already typed, by key). */
export const formOf = (t: Template, samples: ReadonlyMap<string, string> = new Map()): TemplateForm => ({
  name: t.name,
  alias: t.alias ?? '',
  from: t.from ?? '',
  subject: t.subject ?? '',
  replyTo: (t.reply_to ?? []).join(', '),
  html: t.html,
  text: t.text ?? '',
  variables: t.variables.map((v) => ({
    key: v.key,
    type: v.type,
    fallback: asText(v.fallback_value, v.type),
    sample: samples.get(v.key) ?? '',
  })),
});

/** A typed value of a variable: none for an empty field, or what is wrong with it. */
export function typedValue(type: VariableType, text: string): { value?: unknown } | { problem: string } {
  if (text === '') return {};
  if (type === 'string') return { value: text };
  const trimmed = text.trim();
  if (type === 'number') {
    const n = Number(trimmed);
    return trimmed !== '' && Number.isFinite(n) ? { value: n } : { problem: 'must be a number, like 42' };
  }
  if (type === 'boolean')
    return trimmed === 'true' || trimmed === 'false'
      ? { value: trimmed === 'true' }
      : { problem: 'must be true or false' };
  try {
    return { value: JSON.parse(trimmed) };
  } catch {
    return {
      problem:
        type === 'list' ? 'must be a JSON list, like ["a", "b"]' : 'must be a JSON object, like {"a": 1}',
    };
  }
}

const label = (row: VariableRow, index: number) => row.key || `variable ${index + 1}`;

/** The declared variables with their typed fallbacks, and what cannot be read in them. */
function declared(form: TemplateForm): { variables: TemplateVariableInput[]; problems: string[] } {
  const problems: string[] = [];
  const variables = form.variables.map((row, i) => {
    const fallback = typedValue(row.type, row.fallback);
    if ('problem' in fallback) problems.push(`The fallback value of ${label(row, i)} ${fallback.problem}.`);
    return {
      key: row.key,
      type: row.type,
      ...('value' in fallback && fallback.value !== undefined ? { fallback_value: fallback.value } : {}),
    };
  });
  return { variables, problems };
}

/** The body of `POST /v1/templates` and `PATCH /v1/templates/{id}`: an emptied field is removed (null). */
export function bodyOf(form: TemplateForm) {
  const replyTo = form.replyTo
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  return {
    name: form.name,
    alias: form.alias.trim() || null,
    from: form.from.trim() || null,
    subject: form.subject || null,
    reply_to: replyTo.length ? replyTo : null,
    html: form.html,
    text: form.text || null,
    variables: declared(form).variables,
  };
}

/** Why the form cannot be saved as it is, in the service's words where they are its rules. */
export function problemsOf(form: TemplateForm): string[] {
  const { variables, problems } = declared(form);
  const parts = { subject: form.subject || null, html: form.html, text: form.text || null };
  const named = (message: string) =>
    message.replace(
      /^(html|subject|text) uses/,
      (_, part: string) => `the ${part === 'html' ? 'HTML' : part} uses`,
    );
  return [...problems, ...checkTemplate(parts, variables).map((e) => capitalized(named(e.message)))];
}

const capitalized = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;

/** The names the parts use that no variable declares yet (for "Declare …"). */
export function undeclaredOf(form: TemplateForm): string[] {
  const keys = new Set(form.variables.map((v) => v.key));
  return usedVariables({ subject: form.subject, html: form.html, text: form.text }).filter(
    (name) => !keys.has(name),
  );
}

export type Rendered =
  | { ok: true; subject?: string; html: string; text?: string }
  | { ok: false; errors: string[] };

/** The template filled with the sample values (the fallback where a sample is empty), as a send would be. */
export function previewOf(form: TemplateForm): Rendered {
  const { variables, problems } = declared(form);
  const values: Record<string, unknown> = {};
  form.variables.forEach((row, i) => {
    const sample = typedValue(row.type, row.sample);
    if ('problem' in sample) problems.push(`The sample value of ${label(row, i)} ${sample.problem}.`);
    else if (sample.value !== undefined && row.key) values[row.key] = sample.value;
  });
  if (problems.length) return { ok: false, errors: problems };
  const rendered = renderTemplate(
    { subject: form.subject || null, html: form.html, text: form.text || null },
    variables,
    values,
  );
  if (rendered.ok) return rendered;
  // The renderer speaks of a send's `template.variables`; here they are the sample values.
  return {
    ok: false,
    errors: rendered.errors.map((e) =>
      capitalized(e.message.replace('give one', 'give a sample value or a fallback value')),
    ),
  };
}

import type { FieldError } from '../shared/errors.js';

/**
 * Resend's templates: a subject, HTML and text with `{{{NAME}}}` placeholders, the variables the
 * template declares (with a type and an optional fallback), and a send's values for them.
 */
export const VARIABLE_TYPES = ['string', 'number', 'boolean', 'object', 'list'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export interface TemplateVariableInput {
  key: string;
  type: VariableType;
  fallback_value?: unknown;
}

export const MAX_TEMPLATE_VARIABLES = 50;

/** Names Resend fills in itself for broadcasts (contact fields, the unsubscribe link, Handlebars' own). */
export const RESERVED_VARIABLE_NAMES: readonly string[] = Object.freeze([
  'FIRST_NAME',
  'LAST_NAME',
  'EMAIL',
  'UNSUBSCRIBE_URL',
  'contact',
  'this',
]);

/**
 * A key, as Resend takes it: letters, digits and underscores, at most 50 characters (`__proto__`
 * aside: no JSON object can carry a value for it).
 */
export const VARIABLE_KEY = /^(?!__proto__$)[A-Za-z0-9_]{1,50}$/;

export interface TemplateParts {
  subject?: string | null;
  html: string;
  text?: string | null;
}

/** A value's written-out text is bounded; the email's own size limits apply after rendering. */
const MAX_VALUE_BYTES = 100 * 1024;
/** Deeper values would only risk the stack of the check and of JSON.stringify. */
const MAX_VALUE_DEPTH = 64;
/** As email.ts's limit (RFC 5322's line); kept here so email.ts may import this module. */
const MAX_SUBJECT_CHARS = 998;

// Any name between the braces, not only valid keys: a mistyped `{{{first-name}}}` is then reported
// at create instead of reaching recipients as written. No braces or spaces in the name keeps the
// match linear.
const PLACEHOLDER = /\{\{\{\s*([^{}\s]+)\s*\}\}\}/g;

const LINE_BREAK = /[\r\n]/;

const partsInOrder = (parts: TemplateParts) =>
  [
    ['subject', parts.subject],
    ['html', parts.html],
    ['text', parts.text],
  ] as const;

const namesIn = (text: string) => new Set(Array.from(text.matchAll(PLACEHOLDER), (m) => m[1] as string));

/** The names used as {{{NAME}}} in the parts, each once, in order of first use (subject, HTML, text). */
export function usedVariables(parts: TemplateParts): string[] {
  const names = new Set<string>();
  for (const [, text] of partsInOrder(parts))
    if (typeof text === 'string') for (const name of namesIn(text)) names.add(name);
  return [...names];
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

const kindOf = (value: unknown) =>
  typeof value === 'string'
    ? 'a string'
    : typeof value === 'number'
      ? 'a number'
      : typeof value === 'boolean'
        ? 'a boolean'
        : Array.isArray(value)
          ? 'a list'
          : isPlainObject(value)
            ? 'an object'
            : 'a value JSON cannot carry';

const isVariableType = (type: unknown): type is VariableType =>
  (VARIABLE_TYPES as readonly unknown[]).includes(type);

const EXPECTED: Record<VariableType, string> = {
  string: 'a string',
  number: 'a finite number',
  boolean: 'true or false',
  object: 'an object ({…})',
  list: 'a list ([…])',
};

const hasType: Record<VariableType, (value: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  object: isPlainObject,
  list: Array.isArray,
};

/** Why a value inside an object or list cannot be written as JSON, if it cannot. */
function notJson(value: unknown, depth: number): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : 'must hold only finite numbers (no NaN or Infinity)';
  if (depth >= MAX_VALUE_DEPTH) return `must not nest more than ${MAX_VALUE_DEPTH} levels deep`;
  // A hole in a list reads as `undefined` here, so it is refused like any other non-JSON item.
  const items = Array.isArray(value) ? value : isPlainObject(value) ? Object.values(value) : undefined;
  if (items === undefined)
    return 'must hold only JSON values (strings, numbers, booleans, null, lists and objects)';
  for (const item of items) {
    const problem = notJson(item, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * UTF-8 lengths by the web's encoder, not Node's Buffer: the console renders a template's preview
 * with this module in the browser, which has no Buffer.
 */
const utf8 = new TextEncoder();

// UTF-8 takes at least one byte per UTF-16 unit and at most three: most strings need no encoding.
const tooLong = (s: string) =>
  s.length > MAX_VALUE_BYTES || (s.length * 3 > MAX_VALUE_BYTES && utf8.encode(s).length > MAX_VALUE_BYTES);

/** A value's text as it goes into the parts, or what is wrong with it (a phrase after its name). */
function written(type: VariableType, value: unknown): { text: string } | { problem: string } {
  if (!isVariableType(type))
    return { problem: `has an unknown type; use one of ${VARIABLE_TYPES.join(', ')}` };
  if (!hasType[type](value)) {
    const hint =
      type === 'number' && typeof value === 'string'
        ? `: write 42 rather than "42"`
        : `, not ${kindOf(value)}`;
    return { problem: `must be ${EXPECTED[type]} (its type is ${type})${hint}` };
  }
  const problem = type === 'object' || type === 'list' ? notJson(value, 0) : undefined;
  if (problem) return { problem };
  const text = type === 'object' || type === 'list' ? JSON.stringify(value) : String(value);
  if (tooLong(text))
    return { problem: `must be at most ${MAX_VALUE_BYTES / 1024} KB once written out; shorten it` };
  return { text };
}

/**
 * A template's definition checked (at create/update): each variable's key (syntax, reserved,
 * duplicated), type, fallback_value of that type; at most 50; every name used in the parts declared.
 * Errors come in a fixed order: the count, then each variable in order, then the parts (subject,
 * HTML, text) with their undeclared names in order of use.
 */
export function checkTemplate(
  parts: TemplateParts,
  variables: readonly TemplateVariableInput[],
): FieldError[] {
  const errors: FieldError[] = [];
  if (variables.length > MAX_TEMPLATE_VARIABLES)
    errors.push({
      field: 'variables',
      message: `a template may declare at most ${MAX_TEMPLATE_VARIABLES} variables; this one declares ${variables.length}`,
    });
  const inSubject = typeof parts.subject === 'string' ? namesIn(parts.subject) : new Set<string>();
  const declared = new Set<string>();
  variables.forEach((variable, index) => {
    const { key, type, fallback_value: fallback } = variable;
    const at = `variables.${index}`;
    if (typeof key !== 'string') {
      errors.push({ field: `${at}.key`, message: 'key must be a string' });
      return;
    }
    const keyProblem = !VARIABLE_KEY.test(key)
      ? `"${key}" is not a valid key: use 1 to 50 letters, digits or underscores, not starting with a digit`
      : RESERVED_VARIABLE_NAMES.includes(key)
        ? `"${key}" is a reserved name (${RESERVED_VARIABLE_NAMES.join(', ')}); choose another key`
        : declared.has(key)
          ? `"${key}" is declared twice; keep one of them`
          : undefined;
    declared.add(key);
    if (keyProblem) errors.push({ field: `${at}.key`, message: keyProblem });
    if (!isVariableType(type)) {
      errors.push({
        field: `${at}.type`,
        message: `the type of ${key} must be one of ${VARIABLE_TYPES.join(', ')}`,
      });
      return;
    }
    if (fallback === undefined || fallback === null) return;
    const result = written(type, fallback);
    const problem =
      'problem' in result
        ? result.problem
        : inSubject.has(key) && LINE_BREAK.test(result.text)
          ? 'must not contain line breaks, as the subject uses it'
          : undefined;
    if (problem)
      errors.push({ field: `${at}.fallback_value`, message: `the fallback_value of ${key} ${problem}` });
  });
  for (const [field, text] of partsInOrder(parts)) {
    if (typeof text !== 'string') continue;
    for (const name of namesIn(text)) {
      if (declared.has(name)) continue;
      const why = !VARIABLE_KEY.test(name)
        ? 'which is not a valid variable name (1 to 50 letters, digits or underscores); fix the placeholder'
        : RESERVED_VARIABLE_NAMES.includes(name)
          ? 'a reserved name that cannot be declared; rename the placeholder and declare that name'
          : `which is not declared; add {"key": "${name}", "type": …} to variables or remove the placeholder`;
      errors.push({ field, message: `${field} uses {{{${name}}}}, ${why}` });
    }
  }
  return errors;
}

// Each character is mapped once, so the `&` of an entity made here is never escaped again. The
// backtick delimits attribute values in old IE.
const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};
const escapeHtml = (s: string) => s.replace(/[&<>"'`]/g, (c) => HTML_ESCAPES[c] ?? c);

const codePoints = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * Renders the parts with a send's values: a declared variable without a value takes its
 * fallback_value; without either it is an error; a value of the wrong type, a value for a name the
 * template does not declare, more than 50 values, or a value used in the subject that contains a
 * line break (header injection) is an error. HTML gets each value HTML-escaped, subject and text
 * get it as is. Errors come in a fixed order: the declared variables in order, then the values the
 * template does not declare in the order given, then the subject's length.
 */
export function renderTemplate(
  parts: TemplateParts,
  variables: readonly TemplateVariableInput[],
  values: Readonly<Record<string, unknown>>,
  /** The most the rendered parts may hold together (UTF-8 bytes). @default 5 MiB, a single send's */
  maxBytes = 5 * 1024 * 1024,
): { ok: true; subject?: string; html: string; text?: string } | { ok: false; errors: FieldError[] } {
  const given = Object.keys(values);
  if (given.length > MAX_TEMPLATE_VARIABLES)
    return {
      ok: false,
      errors: [
        {
          field: 'template.variables',
          message: `template.variables may give at most ${MAX_TEMPLATE_VARIABLES} values; it gives ${given.length}`,
        },
      ],
    };
  const errors: FieldError[] = [];
  const inSubject = typeof parts.subject === 'string' ? namesIn(parts.subject) : new Set<string>();
  const texts = new Map<string, string>();
  const declared = new Set<string>();
  for (const { key, type, fallback_value: fallback } of variables) {
    if (declared.has(key)) continue;
    declared.add(key);
    const field = `template.variables.${key}`;
    // `Object.hasOwn`: a key like `constructor` must not find the prototype's.
    const own = Object.hasOwn(values, key) ? values[key] : undefined;
    const value = own ?? fallback;
    if (value === undefined || value === null) {
      errors.push({
        field,
        message: `${key} has no value and the template gives no fallback_value; give one`,
      });
      continue;
    }
    const result = written(type, value);
    const whose = own === undefined || own === null ? `the fallback_value of ${key}` : key;
    if ('problem' in result) errors.push({ field, message: `${whose} ${result.problem}` });
    else if (inSubject.has(key) && LINE_BREAK.test(result.text))
      errors.push({ field, message: `${whose} must not contain line breaks, as the subject uses it` });
    else texts.set(key, result.text);
  }
  for (const name of given)
    if (!declared.has(name))
      errors.push({
        field: `template.variables.${name}`,
        message: `the template declares no variable ${name}; remove it or declare it in the template`,
      });
  if (errors.length) return { ok: false, errors };

  // One pass per part: a value that itself contains `{{{X}}}` is written as is, never expanded.
  // The parts together stay within `maxBytes` (UTF-8, counted as it goes): a small
  // template with a long value used many times cannot grow past what an email may be, nor hold the
  // function's memory while it tries.
  const bytes = (s: string) => utf8.encode(s).length;
  let budget = maxBytes - bytes(parts.html) - bytes(parts.subject ?? '') - bytes(parts.text ?? '');
  let over = false;
  const fill = (text: string, encode: (s: string) => string) =>
    text.replace(PLACEHOLDER, (match, name: string) => {
      const value = texts.get(name);
      if (value === undefined || over) return match;
      const out = encode(value);
      budget -= bytes(out) - bytes(match);
      if (budget < 0) over = true;
      return over ? match : out;
    });
  const tooLarge = (): { ok: false; errors: FieldError[] } => ({
    ok: false,
    errors: [
      {
        field: 'template.variables',
        message: `the email would be larger than ${Math.floor(maxBytes / 1024)} KB once its variables are filled in; shorten the values, or use fewer of them`,
      },
    ],
  });
  const asIs = (s: string) => s;
  const rendered: { ok: true; subject?: string; html: string; text?: string } = {
    ok: true,
    html: fill(parts.html, escapeHtml),
  };
  if (over) return tooLarge();
  if (typeof parts.subject === 'string') {
    const subject = fill(parts.subject, asIs);
    const length = codePoints(subject);
    if (length > MAX_SUBJECT_CHARS)
      return {
        ok: false,
        errors: [
          {
            field: 'subject',
            message: `subject may be at most ${MAX_SUBJECT_CHARS} characters once filled in; it has ${length}`,
          },
        ],
      };
    rendered.subject = subject;
  }
  if (typeof parts.text === 'string') rendered.text = fill(parts.text, asIs);
  if (over) return tooLarge();
  return rendered;
}

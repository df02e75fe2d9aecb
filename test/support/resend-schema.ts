import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

/**
 * Resend's OpenAPI document (MIT, from ../shared/spec/resend-openapi.json), copied into
 * test/fixtures so that every clone (CI's too) checks its answers against it.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RESEND_SPEC_PATH = resolve(ROOT, 'test/fixtures/resend-openapi.json');

let ajv: Ajv2020 | undefined;

/** Ajv with the whole document, so `#/components/schemas/…` references resolve; strict off, formats on. */
function validator(): Ajv2020 {
  if (ajv) return ajv;
  const spec = JSON.parse(readFileSync(RESEND_SPEC_PATH, 'utf8'));
  ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(spec, 'resend');
  return ajv;
}

/** Asserts that `body` fits the named schema of Resend's document (`components.schemas.<name>`). */
export function expectResendShape(body: unknown, schema: string): void {
  const validate = validator().getSchema(`resend#/components/schemas/${schema}`);
  if (!validate) throw new Error(`no schema ${schema} in Resend's document`);
  const valid = validate(body);
  expect(validate.errors ?? [], `${schema}: ${JSON.stringify(body)}`).toEqual([]);
  expect(valid).toBe(true);
}

let answers: Ajv2020 | undefined;
let resendSpec: Record<string, unknown> | undefined;

/**
 * Resend's document written for OpenAPI 3.0 in places (`nullable: true`): read as 3.1 means it,
 * `type: [t, "null"]`, so a null Resend allows is not taken for an error.
 */
function nullableAsType(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nullableAsType);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = nullableAsType(v);
  if (out.nullable === true && typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  }
  return out;
}

/**
 * The schema of Resend's answer to a route (our path, `/v1` left out; a `{param}` matches any
 * parameter name) with its success status, or undefined when Resend has no such route.
 */
export function resendAnswer(
  method: string,
  ourPath: string,
): { status: string; validate: (body: unknown) => string[] } | undefined {
  resendSpec ??= nullableAsType(JSON.parse(readFileSync(RESEND_SPEC_PATH, 'utf8'))) as Record<
    string,
    unknown
  >;
  const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
  const wanted = shape(ourPath.replace(/^\/v1/, ''));
  const paths = resendSpec.paths as Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  const path = Object.keys(paths).find((p) => shape(p) === wanted);
  const operation = path ? paths[path]?.[method.toLowerCase()] : undefined;
  if (!operation?.responses) return undefined;
  const [status, response] =
    Object.entries(operation.responses).find(([s]) => s.startsWith('2')) ?? ([] as unknown[]);
  const schema = (response as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.[
    'application/json'
  ]?.schema;
  if (!status || !schema) return undefined;
  if (!answers) {
    answers = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(answers);
    answers.addSchema(resendSpec, 'resend-3.1');
  }
  const validate = answers.compile(
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"resend-3.1#/components/')),
  );
  return {
    status: String(status),
    validate: (body) =>
      validate(body)
        ? []
        : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.keyword}: ${e.message}`),
  };
}

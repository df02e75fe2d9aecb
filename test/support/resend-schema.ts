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

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, expect } from 'vitest';

/**
 * The contract test: every answer the local service gives during a test file (the local HTTPS
 * gateway appends each to CONTRACT_RECORD, in this process or in an `npm start` child, which
 * inherits the variable) is checked, after the file, against the OpenAPI document the service
 * serves: its status must be one the route documents, and its JSON body must fit that answer's
 * schema (which allows no undocumented field). Loaded for every test file (vitest.config.ts).
 */
type Json = Record<string, unknown>;

export interface RecordedAnswer {
  method: string;
  path: string;
  /** `METHOD /path/{param}` of the route, `$default` for the fallback, empty before routing. */
  routeKey: string;
  status: number;
  contentType: string;
  body: string;
}

let checker: ((answer: RecordedAnswer) => string | undefined) | undefined;

async function makeChecker() {
  // Loaded only by a file whose tests talked to the local service.
  const { buildDocument } = await import('../../functions/api-reference/document.js');
  const { ROUTES } = await import('../../functions/routes.js');
  const { ROUTE_DOCS } = await import('../../functions/route-docs.js');
  const doc = (await buildDocument(ROUTES, ROUTE_DOCS)) as {
    paths: Record<string, Record<string, Json>>;
    components: Json;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, 'api');
  const responses = doc.components.responses as Record<string, Json>;
  const errorValidator = ajv.getSchema('api#/components/schemas/Error');
  const validators = new Map<string, ReturnType<Ajv2020['compile']> | undefined>();
  const validatorFor = (path: string, method: string, status: string, media: string) => {
    const key = `${method} ${path} ${status} ${media}`;
    if (!validators.has(key)) {
      const pointer = `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}`;
      const response = doc.paths[path]?.[method]?.responses as Record<string, Json> | undefined;
      const entry = response?.[status];
      const shared =
        typeof entry?.$ref === 'string' ? responses[entry.$ref.split('/').pop() ?? ''] : undefined;
      const content = ((shared ?? entry)?.content ?? {}) as Record<string, Json>;
      validators.set(
        key,
        shared
          ? errorValidator
          : content[media]
            ? ajv.getSchema(`api${pointer}/content/${media.replaceAll('/', '~1')}/schema`)
            : undefined,
      );
    }
    return validators.get(key);
  };
  return (answer: RecordedAnswer): string | undefined => {
    const where = `${answer.method} ${answer.path} → ${answer.status}`;
    const media = answer.contentType.split(';')[0]?.trim() ?? '';
    let body: unknown;
    if (media === 'application/json') {
      try {
        body = JSON.parse(answer.body);
      } catch {
        return `${where}: the body is not JSON: ${answer.body.slice(0, 200)}`;
      }
    }
    // The fallback and the gateway's own refusals: the error shape, always.
    if (answer.routeKey === '$default' || answer.routeKey === '') {
      if (answer.status < 400) return `${where}: an answer of no route that is not an error`;
      if (!errorValidator?.(body))
        return `${where}: not the error shape: ${ajv.errorsText(errorValidator?.errors)}`;
      return undefined;
    }
    const [routeMethod = '', path = ''] = answer.routeKey.split(' ');
    // A public page's HEAD is its GET (routes.ts HEAD_ROUTES): the same status, headers and body.
    const method = routeMethod === 'HEAD' ? 'GET' : routeMethod;
    const operation = doc.paths[path]?.[method.toLowerCase()];
    if (!operation) return `${where}: the route ${answer.routeKey} is not in the document`;
    const documented = Object.keys(operation.responses as Json);
    if (!documented.includes(String(answer.status)))
      return `${where}: status ${answer.status} is not documented for ${answer.routeKey} (documented: ${documented.join(', ')})`;
    const validate = validatorFor(path, method.toLowerCase(), String(answer.status), media);
    if (!validate) return `${where}: ${media || 'no content type'} is not documented for this answer`;
    if (media !== 'application/json') return undefined;
    if (!validate(body))
      return `${where}: ${ajv.errorsText(validate.errors, { separator: '; ' })} in ${answer.body.slice(0, 300)}`;
    return undefined;
  };
}

/** The answers recorded in a file, each checked; the problems found (none: the contract holds). */
export async function contractViolations(file: string): Promise<{ answers: number; violations: string[] }> {
  if (!existsSync(file)) return { answers: 0, violations: [] };
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  checker ??= await makeChecker();
  const check = checker;
  const violations = [...new Set(lines.map((line) => check(JSON.parse(line) as RecordedAnswer)))].filter(
    (v): v is string => v !== undefined,
  );
  return { answers: lines.length, violations };
}

// Each test file (each its own process: pool forks) records to its own file.
const file = join(tmpdir(), `contract-${process.pid}-${Date.now()}.jsonl`);
process.env.CONTRACT_RECORD = file;

afterAll(async () => {
  const { violations } = await contractViolations(file);
  rmSync(file, { force: true });
  expect(violations, 'answers that the OpenAPI document does not describe').toEqual([]);
});

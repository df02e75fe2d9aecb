import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildDocument } from '../../functions/api-reference/document.js';
import { ROUTE_DOCS } from '../../functions/route-docs.js';
import { ROUTES } from '../../functions/routes.js';

/**
 * Our OpenAPI document (functions/api-reference/document.ts) as a validator of answers: the schema of an
 * operation's answer for a status, with `#/components/...` resolved against the whole document.
 */
type Json = Record<string, unknown>;

let state: { doc: Json; ajv: Ajv2020; compiled: Map<string, ValidateFunction> } | undefined;
/** The document, built once per test file (its schemas are loaded on demand, so the build is async). */
const DOCUMENT = await buildDocument(ROUTES, ROUTE_DOCS);

function load() {
  if (state) return state;
  const doc = DOCUMENT;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, 'ours');
  state = { doc, ajv, compiled: new Map() };
  return state;
}

/** The document, built once per test file. */
export const openApiDocument = (): Json => load().doc;

/** Each operation of the document: its path, method and object. */
export function operations(): { path: string; method: string; operation: Json }[] {
  const paths = openApiDocument().paths as Record<string, Record<string, Json>>;
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );
}

const byId = (operationId: string) => operations().find((o) => o.operation.operationId === operationId);

/** A `$ref` to the document's own parts, followed (`#/components/responses/Error404`). */
function resolve(value: Json): Json {
  const ref = value.$ref;
  if (typeof ref !== 'string') return value;
  let at: unknown = openApiDocument();
  for (const part of ref.slice(2).split('/')) at = (at as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return at as Json;
}

/** A schema of the document, compiled with its references into the whole document. */
export function compileSchema(schema: unknown, key: string): ValidateFunction {
  const { ajv, compiled } = load();
  const cached = compiled.get(key);
  if (cached) return cached;
  const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"ours#/components/'));
  const validate = ajv.compile(rooted);
  compiled.set(key, validate);
  return validate;
}

/** The schema of an operation's JSON answer with this status; undefined when none is documented. */
export function answerSchema(operationId: string, status: number): unknown {
  const found = byId(operationId);
  if (!found) return undefined;
  const response = (found.operation.responses as Record<string, Json>)[String(status)];
  if (!response) return undefined;
  const content = resolve(response).content as Record<string, { schema?: unknown }> | undefined;
  return content?.['application/json']?.schema;
}

/**
 * What is wrong with an answer of the operation (its handler's name) with this status, by our
 * document: [] when it fits. An undocumented status is an error too; an error status is checked
 * against the one error shape (`Error`), as the document says.
 */
export function validateAnswer(operationId: string, status: number, body: unknown): string[] {
  if (!byId(operationId)) return [`no operation ${operationId} in the document`];
  const schema = answerSchema(operationId, status);
  if (schema === undefined) return [`${operationId}: status ${status} is not documented`];
  const validate = compileSchema(schema, `${operationId} ${status}`);
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (e) =>
      `${operationId} ${status}: ${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
}

import * as z from 'zod/mini';
import { components, errorSchema } from '../shared/answers.js';
import { MAX_LIMIT } from '../shared/list.js';
import type { RouteDeclaration, RouteDocs, RouteSchemas } from '../shared/route.js';

type Json = Record<string, unknown>;

/** The version of the API the document describes (the paths' /v1), and of the document. */
export const API_VERSION = '1.0.0';

/**
 * Error statuses every route that needs a key may answer, whatever it does: the body or query is
 * invalid (400), no key or a wrong one (401), a key without the permission or a request that did
 * not come through the front door (403), a body over the limit (413), over the key's rate (429),
 * and a failure of ours (500).
 */
export const COMMON_ERRORS = [400, 401, 403, 413, 429, 500] as const;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: the message and `errors` name each offending field (`validation_error`).',
  401: 'No API key (`missing_api_key`), or one that is malformed, unknown or revoked (`invalid_api_key`).',
  403: 'The key may not do this (`restricted_api_key`: a sending-access key, or one held to another domain).',
  404: 'No such resource (`not_found`).',
  409: 'It exists already, or the request conflicts with its state (`already_exists`; for an Idempotency-Key, `invalid_idempotent_request` or `concurrent_idempotent_requests`).',
  413: 'The body is over the limit (`payload_too_large`).',
  422: 'The request is well formed but cannot be done (`validation_error`).',
  429: "Over the key's rate limit (`rate_limit_exceeded`): retry after `Retry-After` seconds.",
  500: 'A failure of the service (`internal_server_error`): safe to retry (with an Idempotency-Key for a send).',
  503: 'A service it depends on is unavailable for now: retry later.',
};

const RATE_HEADERS = {
  'ratelimit-limit': 'Requests per second this key may make.',
  'ratelimit-remaining': 'Requests left in the current second.',
  'ratelimit-reset': 'Seconds until the window resets.',
};

/**
 * A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect). A schema registered as a component
 * (shared/answers.ts) is referred to by `$ref`, wherever it appears.
 */
function jsonSchemaOf(schema: z.ZodMiniType, io: 'input' | 'output'): Json {
  const id = components.get(schema)?.id;
  if (id && io === 'output') return { $ref: `#/components/schemas/${id}` };
  const {
    $schema: _,
    $defs: __,
    ...rest
  } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    ...(io === 'output' ? { metadata: components } : {}),
  }) as Json;
  // Components nested in it come out as local definitions: they are the document's components.
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
}

/** Every component schema (the answers' shared shapes), as JSON Schema. */
function componentSchemas(): Record<string, Json> {
  const { schemas } = z.toJSONSchema(components, {
    io: 'output',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    uri: (id: string) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _, $id: __, ...rest } = schema;
    out[id] = rest;
  }
  return out;
}

/** The query schema's properties as OpenAPI query parameters. */
function queryParameters(schema: z.ZodMiniType): Json[] {
  const json = jsonSchemaOf(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: 'query',
      required: json.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const pathParameters = (path: string): Json[] =>
  [...path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description:
      name === 'id'
        ? 'The id of the resource (for a template, also its alias; for a suppression, also its address).'
        : `The ${(name ?? '').replace(/_/g, ' ')}.`,
  }));

const tagOf = (route: RouteDeclaration) => {
  const segment = route.path.split('/')[2] ?? '';
  return segment === 'api-keys' ? 'API keys' : segment.charAt(0).toUpperCase() + segment.slice(1);
};

function errorResponses(route: RouteDeclaration): Record<string, Json> {
  const statuses = [...new Set([...COMMON_ERRORS, ...(route.errors ?? [])])].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]),
  );
}

function apiOperation(route: RouteDeclaration, docs: RouteDocs, schemas: RouteSchemas): Json {
  const parameters = [
    ...pathParameters(route.path),
    ...(schemas.query ? queryParameters(schemas.query) : []),
    ...(docs.headers ?? []).map((h) => ({
      name: h.name,
      in: 'header',
      required: false,
      description: h.description,
      schema: h.schema,
    })),
  ];
  const body = schemas.bodyJsonSchema?.() ?? (schemas.body ? jsonSchemaOf(schemas.body, 'input') : undefined);
  if (!schemas.answer) throw new Error(`${route.handler} declares no answer schema`);
  const okContent: Json = { schema: jsonSchemaOf(schemas.answer, 'output') };
  if (docs.example !== undefined) okContent.example = docs.example;
  return {
    operationId: route.handler,
    summary: route.summary,
    description: [
      docs.description,
      route.permission === 'sending_access'
        ? 'Permission: any key (`sending_access` or `full_access`).'
        : 'Permission: a `full_access` key.',
    ]
      .filter(Boolean)
      .join('\n\n'),
    tags: [tagOf(route)],
    'x-permission': route.permission,
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: !(route.body?.type === 'json' && route.body.optional === true),
            content: {
              ...(schemas.formJsonSchema
                ? { 'multipart/form-data': { schema: schemas.formJsonSchema() } }
                : {}),
              'application/json': {
                schema: body,
                ...(docs.requestExample !== undefined ? { example: docs.requestExample } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      ...Object.fromEntries(
        (route.ok ?? [200]).map((status) => [
          String(status),
          {
            description: docs.ok,
            headers: rateHeaderRefs(),
            content: { 'application/json': okContent },
          },
        ]),
      ),
      ...errorResponses(route),
    },
  };
}

const rateHeaderRefs = () =>
  Object.fromEntries(
    Object.keys(RATE_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );

/** A public page's operation (`permission: 'public'`): what it answers, from its declaration and docs. */
function publicOperation(route: RouteDeclaration, docs: RouteDocs): Json {
  if (!route.page) throw new Error(`the public route ${route.handler} declares no page answer`);
  const types = typeof route.page.type === 'string' ? [route.page.type] : route.page.type;
  return {
    operationId: route.handler,
    summary: route.summary,
    description: 'Public: needs no key. It serves only what is built into the service.',
    tags: ['Service'],
    'x-permission': 'public',
    security: [],
    responses: {
      '200': {
        description: docs.ok,
        content: Object.fromEntries(
          types.map((type) => [type, { schema: docs.pageSchema ?? { type: 'string' } }]),
        ),
      },
      '403': { $ref: '#/components/responses/Error403' },
      ...(route.page.notFound ? { '404': { $ref: '#/components/responses/Error404' } } : {}),
      '500': { $ref: '#/components/responses/Error500' },
    },
    ...(route.path.includes('{') ? { parameters: pathParameters(route.path) } : {}),
  };
}

/** A token page's operation (`permission: 'token'`): no key; the token in its path is the credential. */
function tokenOperation(route: RouteDeclaration, docs: RouteDocs): Json {
  if (!route.page) throw new Error(`the token route ${route.handler} declares no page answer`);
  const types = typeof route.page.type === 'string' ? [route.page.type] : route.page.type;
  const page = (description: string) => ({
    description,
    content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string' } }])),
  });
  return {
    operationId: route.handler,
    summary: route.summary,
    description:
      'Needs no key: the token in its path is the credential. An unknown, altered or expired token answers the same 404 page; a link opened too often, 429 with `Retry-After`.',
    tags: ['Emails'],
    'x-permission': 'token',
    security: [],
    parameters: pathParameters(route.path),
    responses: {
      '200': page(docs.ok),
      '404': page('No such link, or it has expired.'),
      '429': page('Opened too often in the last minute: try again after `Retry-After` seconds.'),
      '500': page('The page could not be made.'),
    },
  };
}

/**
 * The OpenAPI 3.1 document of these routes (the route table, functions/routes.ts, and their docs,
 * functions/route-docs.ts), built from their declarations, the schemas the handlers validate with,
 * the answers' schemas and the routes' words: GET /v1/openapi.json serves it, GET /docs shows it.
 */
export async function buildDocument(
  routes: readonly RouteDeclaration[],
  docs: Readonly<Record<string, RouteDocs>>,
): Promise<Json> {
  const paths: Record<string, Record<string, Json>> = {};
  const add = (route: RouteDeclaration, operation: Json) => {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, Json>)[route.method.toLowerCase()] = operation;
  };
  const docsOf = (route: RouteDeclaration) => {
    const found = docs[route.handler];
    if (!found) throw new Error(`no docs for the route ${route.handler} (its concept's docs.ts)`);
    return found;
  };
  const apiRoutes = routes.filter(
    (route) => route.permission === 'full_access' || route.permission === 'sending_access',
  );
  // One route after another: each route's answers register their components as their modules
  // load, and the components come out in that order, so the document is the same bytes (and ETag)
  // on every instance.
  for (const route of apiRoutes)
    add(route, apiOperation(route, docsOf(route), (await route.schemas?.()) ?? {}));
  for (const route of routes)
    if (route.permission === 'public') add(route, publicOperation(route, docsOf(route)));
    else if (route.permission === 'token') add(route, tokenOperation(route, docsOf(route)));
  const statuses = new Set<number>([403, 500, ...COMMON_ERRORS]);
  for (const route of apiRoutes) for (const s of route.errors ?? []) statuses.add(s);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Email service API',
      version: API_VERSION,
      description:
        "An email sending API on your own Amazon SES, compatible with Resend's: send, follow each email's delivery, receive its events as signed webhooks, register sending domains. Every route but the public pages needs an API key as a bearer token. Lists are cursor pages (`limit`, `after`, `before`) of at most " +
        `${MAX_LIMIT} items. Every error has one shape (\`Error\`). A path that is not listed answers 404, and a method a listed path does not have 405 with \`Allow\` naming those it has (both after the key check: 401 without a valid key).`,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'Where this document is served from' }],
    security: [{ apiKey: [] }],
    tags: [...new Set([...apiRoutes.map(tagOf), 'Service'])].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key (`esk_…`) as `Authorization: Bearer <key>`. `full_access` keys may call every route; `sending_access` keys only the sends (and may be held to one domain).',
        },
      },
      headers: Object.fromEntries(
        Object.entries(RATE_HEADERS).map(([name, description]) => [
          name,
          { description, schema: { type: 'integer', minimum: 0 } },
        ]),
      ),
      responses: Object.fromEntries(
        [...statuses]
          .sort((a, b) => a - b)
          .map((status) => [
            `Error${status}`,
            {
              description: ERROR_DESCRIPTIONS[status] ?? `Error ${status}.`,
              ...(status === 429
                ? {
                    headers: {
                      'retry-after': { description: 'Seconds to wait.', schema: { type: 'integer' } },
                    },
                  }
                : {}),
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            },
          ]),
      ),
      schemas: componentSchemas(),
    },
  };
}

// The error shape is a component whether or not an answer refers to it.
void errorSchema;

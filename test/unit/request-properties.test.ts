/**
 * Property-based tests of what every request goes through before any work: the request schemas,
 * the JSON depth guard, address parsing and path matching. Whatever the input, the answer is a
 * parsed value or a 400 in the one error shape naming fields, never another exception (a 500).
 * The same inputs at volume, over HTTPS against the running service, are `npm run fuzz`.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiKeySchema, listApiKeysQuerySchema } from '../../functions/api-keys/requests.js';
import { createDomainSchema, listDomainsQuerySchema } from '../../functions/domains/model.js';
import { parseBatch } from '../../functions/emails/batch.js';
import { MAX_RECIPIENTS, sendEmailSchema, toContent } from '../../functions/emails/email.js';
import { listEmailsQuerySchema } from '../../functions/emails/list-query.js';
import { loadScheduleReader } from '../../functions/emails/schedule.js';
import { jsonDepthExceeds, parseInput } from '../../functions/http/middleware.js';
import { allowedMethods, findRoute, ROUTES } from '../../functions/routes.js';
import { formatAddress, parseAddress } from '../../functions/shared/address.js';
import { ApiError } from '../../functions/shared/errors.js';
import { hostileString } from '../support/arbitraries.js';

// Times in words are read by a module loaded on first use (handlers load it; these call the parser).
beforeAll(() => loadScheduleReader('in 1 hour'));

/** Runs a schema on an input: the parsed value, or the 400 it answers (anything else fails the test). */
function outcome(schema: Parameters<typeof parseInput>[0], input: unknown) {
  try {
    return { ok: true as const, value: parseInput(schema, input) };
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const body = (error as ApiError).toBody();
    expect(body).toMatchObject({ statusCode: 400, name: 'validation_error', message: expect.any(String) });
    expect(body.message.length).toBeGreaterThan(0);
    for (const field of body.errors ?? []) {
      expect(typeof field.field).toBe('string');
      expect(typeof field.message).toBe('string');
    }
    return { ok: false as const, body };
  }
}

const bodySchemas = {
  'POST /v1/emails': sendEmailSchema,
  'POST /v1/domains': createDomainSchema,
  'POST /v1/api-keys': createApiKeySchema,
};
const querySchemas = {
  'GET /v1/emails': listEmailsQuerySchema,
  'GET /v1/domains': listDomainsQuerySchema,
  'GET /v1/api-keys': listApiKeysQuerySchema,
};

/** Strings people and attackers send: unicode, control characters, header injection, huge, empty. */
const address = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,20}[a-z0-9]$/),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0]$/),
    fc.constantFrom('com', 'test', 'example', 'xn--p1ai'),
  )
  .filter(([local]) => !local.includes('..') && !local.includes('.+') && !local.includes('.-'))
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
const named = fc
  .tuple(fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,20}$/), address)
  .map(([n, a]) => `${n.trim() || 'X'} <${a}>`);

describe('request schemas, for any input', () => {
  it.each(Object.entries(bodySchemas))('%s: any JSON body parses or is a 400 naming fields', (_, schema) => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => {
        outcome(schema, body);
      }),
    );
  });

  it.each(Object.entries(bodySchemas))(
    '%s: any object of hostile strings parses or is a 400',
    (_, schema) => {
      const keys = fc.constantFrom(
        'from',
        'to',
        'cc',
        'bcc',
        'reply_to',
        'subject',
        'html',
        'text',
        'domain',
        'name',
        'permission',
        'domain_id',
        'tags',
        'headers',
        '__proto__',
        'constructor',
      );
      fc.assert(
        fc.property(
          fc.dictionary(keys, fc.oneof(hostileString, fc.array(hostileString, { maxLength: 60 }))),
          (body) => {
            outcome(schema, body);
          },
        ),
      );
    },
  );

  it.each(Object.entries(querySchemas))(
    '%s: any query string parses into its bounds or is a 400',
    (_, schema) => {
      const keys = fc.constantFrom('limit', 'offset', 'status', 'cursor', 'after', 'before');
      const ids = fc.constantFrom(
        'em_01m84ve61ce6rrdd8rjb5j67r6',
        'dom_01m84ve61ce6rrdd8rjb5j67r6',
        'key_01m84ve61ce6rrdd8rjb5j67r6',
      );
      fc.assert(
        fc.property(
          fc.dictionary(
            keys,
            fc.oneof(hostileString, ids, fc.integer().map(String), fc.double().map(String)),
          ),
          (query) => {
            const result = outcome(schema, query);
            if (!result.ok) return;
            const value = result.value as { limit: number; offset: number; after?: string; before?: string };
            expect(Number.isInteger(value.limit) && value.limit >= 1 && value.limit <= 100).toBe(true);
            expect(Number.isInteger(value.offset) && value.offset >= 0 && value.offset <= 10_000).toBe(true);
            // One way to start a page: an offset, or one cursor.
            expect(value.after !== undefined && value.before !== undefined).toBe(false);
            if (value.after ?? value.before) expect(query.offset).toBeUndefined();
          },
        ),
      );
    },
  );
});

describe('POST /v1/emails/batch, for any input', () => {
  it('any JSON body, and any array of hostile objects, is a batch or a 400 naming fields by index', () => {
    const check = (body: unknown, mode: 'strict' | 'permissive') => {
      try {
        const { entries, errors } = parseBatch(body, mode);
        expect(entries.length + errors.length).toBe((body as unknown[]).length);
        if (mode === 'strict') expect(errors).toEqual([]);
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).toBody()).toMatchObject({ statusCode: 400, name: 'validation_error' });
        for (const field of (error as ApiError).fieldErrors ?? [])
          expect(field.field).toMatch(/^(\(body\)|\d+(\..*)?)$/);
      }
    };
    const item = fc.dictionary(
      fc.constantFrom('from', 'to', 'subject', 'text', 'tags', 'headers', 'attachments', 'scheduled_at'),
      fc.oneof(hostileString, fc.array(hostileString, { maxLength: 3 })),
    );
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), fc.array(item, { maxLength: 5 })),
        fc.constantFrom('strict', 'permissive'),
        (body, mode) => check(body, mode as 'strict' | 'permissive'),
      ),
    );
  });
});

describe('POST /v1/emails rules, for generated emails', () => {
  it('accepts every well-formed email and keeps every recipient; refuses more than 50 recipients in all', () => {
    fc.assert(
      fc.property(
        fc.record({
          from: fc.oneof(address, named),
          to: fc.oneof(address, fc.array(fc.oneof(address, named), { minLength: 1, maxLength: 30 })),
          cc: fc.array(address, { maxLength: 30 }),
          bcc: fc.array(address, { maxLength: 30 }),
          subject: fc
            .string({ minLength: 1, maxLength: 200 })
            .filter((s) => s.trim().length > 0 && !/[\r\n]/.test(s)),
          text: fc.string({ minLength: 1 }),
        }),
        (email) => {
          const total = [email.to].flat().length + email.cc.length + email.bcc.length;
          const result = outcome(sendEmailSchema, email);
          expect(result.ok).toBe(total <= MAX_RECIPIENTS);
          if (result.ok) {
            const content = toContent(result.value as never);
            expect(content.to.length + content.cc.length + content.bcc.length).toBe(total);
          } else {
            expect(result.body.errors?.map((e) => e.field)).toContain('to');
          }
        },
      ),
    );
  });

  it('names every unknown field, and never accepts a subject with a line break', () => {
    fc.assert(
      fc.property(
        fc
          .string({ minLength: 1, maxLength: 20 })
          .filter((k) => !['from', 'to', 'cc', 'bcc', 'reply_to', 'subject', 'html', 'text'].includes(k)),
        fc.string(),
        (key, subjectTail) => {
          const base = { from: 'a@acme.com', to: 'b@example.com', text: 'x' };
          const unknown = outcome(sendEmailSchema, { ...base, subject: 'Hi', [key]: 1 });
          expect(unknown.ok).toBe(false);
          if (!unknown.ok)
            expect(unknown.body.errors).toContainEqual({ field: key, message: 'unknown field' });
          const injected = outcome(sendEmailSchema, {
            ...base,
            subject: `Hi\r\nBcc: x@evil.com${subjectTail}`,
          });
          expect(injected.ok).toBe(false);
        },
      ),
    );
  });
});

describe('guards before parsing, for any input', () => {
  /** How deep arrays and objects nest in a parsed JSON value. */
  const depthOf = (value: unknown): number =>
    value && typeof value === 'object'
      ? 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf))
      : 0;

  it('the JSON depth guard agrees with the parsed depth of any JSON text', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ depthSize: 'large', maxDepth: 40 }),
        fc.integer({ min: 0, max: 40 }),
        (value, max) => {
          const text = JSON.stringify(value);
          expect(jsonDepthExceeds(text, max)).toBe(depthOf(value) > max);
        },
      ),
    );
  });

  it('address parsing never throws, refuses control characters, and a parsed address parses back to itself', () => {
    fc.assert(
      fc.property(fc.oneof(hostileString, address, named), (text) => {
        const parsed = parseAddress(text);
        if ('error' in parsed) return;
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the property is about control characters
        expect(/[\u0000-\u001f\u007f]/.test(formatAddress(parsed))).toBe(false);
        expect(parseAddress(formatAddress(parsed))).toEqual(parsed);
      }),
    );
  });

  it('any segment in an {id} slot, bad percent-encoding included, routes to that route without throwing', () => {
    const templated = ROUTES.filter((route) => route.path.includes('{id}'));
    fc.assert(
      fc.property(
        fc.constantFrom(...templated),
        fc.oneof(
          fc.string({ minLength: 1 }).map((text) => text.replaceAll('/', '')),
          // '$`' and '$&' are replacement patterns: the path is built with a function, as the router sees it
          fc.constantFrom('%', '%zz', '%E0%A4%A', '%C3', '%%', '%2F', '$`', '$&'),
        ),
        (route, segment) => {
          fc.pre(segment.length > 0);
          const found = findRoute(
            route.method,
            route.path.replace('{id}', () => segment),
          );
          expect(found?.route).toBe(route);
        },
      ),
    );
  });

  it('routing never throws, whatever the method and path', () => {
    const segment = fc.oneof(
      fc.string(),
      fc.constantFrom('..', '%', '%zz', '%E0%A4%A', 'v1', 'emails', 'em_x', '\u0000'),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'get', 'X'),
        fc.array(segment, { maxLength: 6 }).map((parts) => `/${parts.join('/')}`),
        (method, path) => {
          const found = findRoute(method, path);
          const allowed = allowedMethods(path);
          if (found) expect(allowed).toContain(found.route.method);
        },
      ),
    );
  });
});

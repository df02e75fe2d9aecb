import * as z from 'zod/mini';
import { DOMAIN_ID_PREFIX, isId } from '../shared/ids.js';
import { pageQuerySchema, pageShape } from '../shared/list.js';
import { API_KEY_ID_PREFIX, PERMISSIONS } from './model.js';

/*
 * The API key routes' request schemas, apart from api-keys.ts, which every function's key check
 * loads: zod builds a schema when its module loads, and only these routes use them.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

const keyName = z.string({ error: 'must be a string' }).check(
  z.trim(),
  z.minLength(1, 'must not be empty'),
  z.maxLength(50, 'must be at most 50 characters'),
  z.refine((s) => !CONTROL.test(s), 'must not contain control characters'),
);

/** `PATCH /v1/api-keys/{id}`: only the name changes, as with Resend. */
export const updateApiKeySchema = z.strictObject({ name: keyName });

/** `POST /v1/api-keys`. */
export const createApiKeySchema = z
  .pipe(
    z.strictObject({
      name: keyName,
      permission: z._default(
        z.enum(PERMISSIONS, { error: `must be one of ${PERMISSIONS.join(', ')}` }),
        'full_access',
      ),
      domain_id: z.optional(
        z.string().check(z.refine((s) => isId(DOMAIN_ID_PREFIX, s), 'must be a domain id (dom_…)')),
      ),
    }),
    z.transform((body, ctx) => {
      if (body.domain_id && body.permission !== 'sending_access') {
        ctx.issues.push({
          code: 'custom',
          message: 'a key restricted to a domain must have permission sending_access',
          input: body,
          path: ['domain_id'],
        });
        return z.NEVER;
      }
      return body;
    }),
  )
  .register(z.globalRegistry, {
    // What the transform checks, for the OpenAPI document.
    if: { required: ['domain_id'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then
    then: { required: ['permission'], properties: { permission: { const: 'sending_access' } } },
  });

export const listApiKeysQuerySchema = pageQuerySchema(pageShape(API_KEY_ID_PREFIX));

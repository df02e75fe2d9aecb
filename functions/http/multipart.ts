import { validationError } from '../shared/errors.js';
import type { HttpEvent } from './event.js';

/**
 * A `multipart` route's body (shared/route.ts): a `multipart/form-data` form, as Resend's SDK sends
 * a file (its FormData), parsed by Node's own `Response.formData()`; or a JSON object in its place.
 * API Gateway hands a form's bytes base64-encoded (`isBase64Encoded`), the local gateway likewise.
 */
export type FormBody = { readonly form: FormData } | { readonly json: unknown };

export async function readForm(event: HttpEvent): Promise<FormBody> {
  const type = event.headers?.['content-type'] ?? '';
  if (event.body === undefined || event.body === '')
    throw validationError('The request body is missing: send a multipart/form-data form (or a JSON object).');
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (/^multipart\/form-data\s*;/i.test(type)) {
    try {
      return { form: await new Response(bytes, { headers: { 'content-type': type } }).formData() };
    } catch {
      throw validationError('The request body is not a valid multipart/form-data form.');
    }
  }
  if (type === '' || /^application\/(.+\+)?json\s*($|;)/i.test(type)) {
    try {
      // Too deep a nesting fails here (a RangeError), or at the schema, which takes two levels.
      return { json: JSON.parse(bytes.toString('utf8')) as unknown };
    } catch {
      throw validationError('The request body is not valid JSON.');
    }
  }
  throw validationError(`Content-Type must be multipart/form-data or application/json (got "${type}").`);
}

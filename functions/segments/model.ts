/**
 * Segments, as Resend has them: named groups of contacts (static: a contact is in one when added to
 * it, on creation, by an import or through `POST /v1/contacts/{id}/segments/{segment_id}`). The older
 * audiences are segments under another name (`/v1/audiences`, `object: "audience"`). A membership is
 * an item of its own (adapters/dynamodb/audience-items.ts), so a contact in many segments is never
 * one growing item, and a segment of a million is listed page by page.
 */
import * as z from 'zod/mini';
import { isUuid } from '../shared/ids.js';
import { pageQuerySchema, pageShape } from '../shared/list.js';

export const MAX_SEGMENT_NAME_CHARS = 200;

const name = z.string({ error: 'must be a string' }).check(
  z.refine((s) => s.trim().length > 0, 'must not be empty'),
  z.refine(
    (s) => [...s].length <= MAX_SEGMENT_NAME_CHARS,
    `may be at most ${MAX_SEGMENT_NAME_CHARS} characters`,
  ),
);

const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

/**
 * `POST /v1/segments`: a name. Resend's deprecated `audience_id` is taken and ignored (audiences
 * are segments here); a `filter` (Resend's dynamic segments) is refused as an unknown field: our
 * segments hold the contacts added to them.
 */
export const createSegmentSchema = z.strictObject(
  { name, audience_id: z.optional(z.string({ error: 'must be a string' })) },
  bodyError,
);

/** `POST /v1/audiences`: a name (Resend's CreateAudienceOptions). */
export const createAudienceSchema = z.strictObject({ name }, bodyError);

/** `PATCH /v1/segments/{id}`: a new name (ours: Resend's document has no rename). */
export const updateSegmentSchema = z.strictObject({ name }, bodyError);

const cursor = (field: string) =>
  z.optional(
    z.string().check(z.refine((s) => isUuid(s), `${field} must be an id (a UUID) from a listed item`)),
  );

/**
 * A page of a list of audience items (segments, a segment's contacts, a contact's segments): the
 * usual `limit`, `offset`, `after`, `before`, the cursors UUIDv7 ids (which sort by creation time).
 */
export const uuidPageQuerySchema = pageQuerySchema({
  ...pageShape('seg'),
  after: cursor('after'),
  before: cursor('before'),
});

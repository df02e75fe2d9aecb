/**
 * What the routes' examples in the OpenAPI document share (each concept's docs.ts): ids and times
 * that refer to one another across concepts, and the shapes every list and change answers.
 */
export const T0 = '2026-11-22T03:29:55.214Z';
export const T1 = '2026-11-22T03:29:57.931Z';
export const T2 = '2026-11-22T04:12:08.402Z';
export const EMAIL_ID = 'em_01m80mv90eew9ryfvqd1ksnhes';
export const DOMAIN_ID = 'dom_01m7zq4c1pe8n0tr3ww5yq2kd6';
export const TEMPLATE_ID = 'tpl_01m80hz2b7ed3s6h0c9yb1q4tm';
export const KEY_ID = 'key_01m80ftx0gfbk2rmwe7pqv5n3a';
export const SUPPRESSION_ID = 'sup_01m80q2w7hf4yqcz1rj0xm8bve';
export const WEBHOOK_ID = 'wh_01m80g6k2sexmbvq9w3t0p7jrh';
export const MESSAGE_ID = 'msg_01m80mv9cb3ma1x6fe2wz9qk0d';
export const ATTACHMENT_ID = '6b0d7e71-3f4c-9a2e-8d15-0c2f4b7a9e33';

/** A page of a list. */
export const page = (data: unknown[], has_more = false) => ({ object: 'list', has_more, data });
/** `{object, id}`: what most changes answer. */
export const ref = (object: string, id: string) => ({ object, id });
/** `{object, id, deleted: true}`: what a removal answers. */
export const removed = (object: string, id: string) => ({ object, id, deleted: true });

/** How every list pages. */
export const LIST =
  'Newest first, in cursor pages: `limit` (1 to 100, default 20), then `after` or `before` an id from a page (or `offset`, at most 10,000).';

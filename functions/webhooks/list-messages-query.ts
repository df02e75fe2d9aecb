import * as z from 'zod/mini';
import { pageQuerySchema, pageShape } from '../shared/list.js';
import { MESSAGE_ID_PREFIX } from './model.js';

/**
 * The query of GET /v1/webhooks/{id}/events, in a module of its own so that the other webhook
 * functions, which load the model, do not build it (docs/performance.md: no request schema of
 * another route). Ours beside the page: `include=attempts` lists each message with its newest
 * attempts (MOST_ATTEMPTS_INCLUDED), in one request.
 */
export const listMessagesQuerySchema = pageQuerySchema({
  ...pageShape(MESSAGE_ID_PREFIX),
  include: z.optional(z.enum(['attempts'], { error: 'include may only be "attempts"' })),
});

import { backgroundHandler } from '../observability/middleware.js';
import { consumerDeps } from '../wiring/process-send-queue.js';
import { makeHandler } from './process-send-queue.js';

/**
 * The broadcast lane's consumer: the send queue's (process-send-queue.ts), on the lane, with
 * `lane: 'broadcast'` (emails/broadcast-lane.ts): transactional mail keeps first claim on the
 * account's rate, a contact unsubscribed since the fan-out is withheld, every email gets its own
 * one-click unsubscribe headers, and an email of a canceled broadcast ends unsent.
 */
export { makeHandler };

export const handler = backgroundHandler(() => makeHandler(consumerDeps('broadcast')));

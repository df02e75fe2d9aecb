import { audienceReads, type Table } from '../adapters/dynamodb/repositories.js';
import type { GateDeps } from '../emails/deliver-gate.js';
import type { UnsubscribeLinks } from '../unsubscribe/links.js';

/**
 * The send gate's wiring (emails/deliver-gate.ts), for the send consumer: the audience's reads, and
 * the unsubscribe links, whose code (the token, the keys' secret read at run time) is loaded by the
 * first email with `topic_id` an instance sends: an email without one loads and reads none of it.
 */
export function sendGateDeps(table: Table, links: () => Promise<UnsubscribeLinks>): Required<GateDeps> {
  let loaded: Promise<UnsubscribeLinks> | undefined;
  return {
    audience: audienceReads(table),
    unsubscribeLinks: {
      url: async (input) => {
        loaded ??= links().catch((error) => {
          loaded = undefined;
          throw error;
        });
        return (await loaded).url(input);
      },
    },
  };
}

/**
 * The unsubscribe links of the unsubscribe concept (its SignedUnsubscribeLinks, with PUBLIC_ORIGIN
 * and the keys' secret UNSUBSCRIBE_KEYS_SECRET read through the secrets extension), loaded on first
 * use: a chunk of its own, so a consumer instance that sends no email with topic_id loads none of it.
 */
export const unsubscribeLinksOnFirstUse = async (): Promise<UnsubscribeLinks> =>
  (await import('./unsubscribe-links.js')).unsubscribeLinks();

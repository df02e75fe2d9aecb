import { audienceReads, broadcastRecipientReads } from '../adapters/dynamodb/repositories.js';
import { apiDeps } from '../wiring.js';

/** The broadcast's recipients and clicked links: its tally's items, and the contacts by address. */
export const broadcastRecipientDeps = (name: 'list-broadcast-recipients' | 'list-broadcast-clicked-links') =>
  apiDeps(name, {
    recipients: broadcastRecipientReads,
    ...(name === 'list-broadcast-recipients' ? { audience: audienceReads } : {}),
  });

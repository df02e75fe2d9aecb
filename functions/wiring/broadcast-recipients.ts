import { audienceReads, broadcastRecipientReads } from '../adapters/dynamodb/repositories.js';
import { apiDeps } from '../wiring.js';

/** A broadcast's recipients: its tally's items, and the page's contacts by address. */
export const broadcastRecipientsDeps = () =>
  apiDeps('list-broadcast-recipients', { recipients: broadcastRecipientReads, audience: audienceReads });

/** A broadcast's clicked links: its tally's items. */
export const broadcastClickedLinksDeps = () =>
  apiDeps('list-broadcast-clicked-links', { recipients: broadcastRecipientReads });

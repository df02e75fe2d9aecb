import type { DocsOf } from '../shared/route.js';
import type { UNSUBSCRIBE_ROUTES } from './routes.js';

/** The unsubscribe routes' words (docs/api.md, "Unsubscribing", says more). */
export const UNSUBSCRIBE_DOCS: DocsOf<typeof UNSUBSCRIBE_ROUTES> = {
  'unsubscribe-page': {
    description:
      "The link of `List-Unsubscribe` in an email sent with `topic_id`. Its token is signed (HMAC-SHA256, a key id, keys kept in Secrets Manager): an altered or forged token, or one whose key was retired (at least 60 days after its email), answers the same 404 page. The page lists the public topics, the private topics the contact is opted in to, and the link's own topic, each with the contact's subscription (its choice, else the topic's default), and a global unsubscribe, in one form that POSTs back to the link. No script; a GET changes nothing (link scanners fetch it).",
    ok: 'The preference page (HTML).',
  },
  unsubscribe: {
    description:
      "RFC 8058's one-click unsubscribe: a body `List-Unsubscribe=One-Click` (form-urlencoded or multipart, as mailbox providers send it), or any body that is not the page's form, opts the contact out of the link's topic (or out of every email, for a link without a topic) at once, raising `contact.topics.updated` (or `contact.updated`), and counts `unsubscribed` in the email metrics. The page's form (`form=preferences`, `topic.<id>=opt_in|opt_out`, `unsubscribed=on`) sets the choices it lists. An address with no contact gets one, created opted out. Repeating a POST changes nothing more.",
    ok: 'The preference page as it now is (HTML), saying what was done.',
  },
};

import { API_KEY_DOCS } from './api-keys/docs.js';
import { API_REFERENCE_DOCS } from './api-reference/docs.js';
import { BROADCAST_DOCS } from './broadcasts/docs.js';
import { CONSOLE_DOCS } from './console/docs.js';
import { CONTACT_IMPORT_DOCS } from './contact-imports/docs.js';
import { CONTACT_PROPERTY_DOCS } from './contact-properties/docs.js';
import { CONTACT_DOCS } from './contacts/docs.js';
import { DOMAIN_DOCS } from './domains/docs.js';
import { EMAIL_DOCS } from './emails/docs.js';
import { METRICS_DOCS } from './metrics/docs.js';
import { RECEIVING_DOCS } from './receiving/docs.js';
import { LOG_DOCS } from './request-logs/docs.js';
import type { RouteHandler } from './routes.js';
import { SEGMENT_DOCS } from './segments/docs.js';
import type { RouteDocs } from './shared/route.js';
import { SUPPRESSION_DOCS } from './suppressions/docs.js';
import { TEMPLATE_DOCS } from './templates/docs.js';
import { TOPIC_DOCS } from './topics/docs.js';
import { UNSUBSCRIBE_DOCS } from './unsubscribe/docs.js';
import { USAGE_DOCS } from './usage/docs.js';
import { WEBHOOK_DOCS } from './webhooks/docs.js';

/** Every route's words and examples for the document, by handler (each concept's docs.ts). */
export const ROUTE_DOCS: Readonly<Record<RouteHandler, RouteDocs>> = {
  ...EMAIL_DOCS,
  ...METRICS_DOCS,
  ...USAGE_DOCS,
  ...RECEIVING_DOCS,
  ...DOMAIN_DOCS,
  ...TEMPLATE_DOCS,
  ...API_KEY_DOCS,
  ...SUPPRESSION_DOCS,
  ...SEGMENT_DOCS,
  ...WEBHOOK_DOCS,
  ...TOPIC_DOCS,
  ...CONTACT_PROPERTY_DOCS,
  ...LOG_DOCS,
  ...API_REFERENCE_DOCS,
  ...CONSOLE_DOCS,
  ...CONTACT_IMPORT_DOCS,
  ...CONTACT_DOCS,
  ...UNSUBSCRIBE_DOCS,
  ...BROADCAST_DOCS,
};

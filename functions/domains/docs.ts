import { DOMAIN_ID, LIST, page, ref, removed, T0 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import type { DOMAIN_ROUTES } from './routes.js';

/** The domains' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const domainExample = {
  object: 'domain',
  id: DOMAIN_ID,
  name: 'acme.test',
  domain: 'acme.test',
  status: 'pending',
  created_at: T0,
  region: 'eu-west-1',
  open_tracking: false,
  click_tracking: false,
  tls: 'opportunistic',
  capabilities: { sending: 'enabled', receiving: 'disabled' },
  records: [
    {
      record: 'DKIM',
      type: 'CNAME',
      name: 'x3k4bq2t7lbr5ghf6yq2kpmnj3oufrnx._domainkey.acme.test',
      value: 'x3k4bq2t7lbr5ghf6yq2kpmnj3oufrnx.dkim.amazonses.com',
      ttl: 'Auto',
      status: 'pending',
    },
    {
      record: 'SPF',
      type: 'MX',
      name: 'send.acme.test',
      value: 'feedback-smtp.eu-west-1.amazonses.com',
      priority: 10,
      ttl: 'Auto',
      status: 'pending',
    },
    {
      record: 'SPF',
      type: 'TXT',
      name: 'send.acme.test',
      value: 'v=spf1 include:amazonses.com ~all',
      ttl: 'Auto',
      status: 'pending',
    },
  ],
  mail_from_domain: 'send.acme.test',
  dmarc_record: {
    type: 'TXT',
    name: '_dmarc.acme.test',
    value: 'v=DMARC1; p=none;',
    ttl: 'Auto',
    status: 'not_checked',
  },
};

function verifiedRecords() {
  return domainExample.records.map((record) => ({ ...record, status: 'verified' }));
}

export const DOMAIN_DOCS: DocsOf<typeof DOMAIN_ROUTES> = {
  'create-domain': {
    ok: 'Added: publish its records.',
    example: domainExample,
    requestExample: { name: 'acme.test', open_tracking: false, click_tracking: false },
    description:
      "`{domain}` or Resend's `{name}`. `region`, if given, must be the stack's region (400 otherwise). `custom_return_path` is the MAIL FROM subdomain (default `send`). `capabilities.receiving` `enabled` adds the `Receiving` MX record; in a Region where SES does not receive it is a 400 naming those where it does. 409 when the domain exists already (here, or as an SES identity this service did not create).",
  },
  'list-domains': {
    ok: 'A page of domains, with their stored statuses.',
    example: page([domainExample]),
    description: `${LIST} Each domain whole, with its records (Resend lists fewer fields).`,
  },
  'get-domain': {
    ok: 'The domain, its status read fresh from SES.',
    example: { ...domainExample, status: 'verified', records: verifiedRecords() },
  },
  'verify-domain': {
    ok: 'The domain, its status read from SES now.',
    example: { ...domainExample, status: 'verified', records: verifiedRecords() },
    description: 'The whole domain (Resend answers `{object, id}` only).',
  },
  'update-domain': {
    ok: 'Changed.',
    example: ref('domain', DOMAIN_ID),
    requestExample: {
      click_tracking: true,
      tracking_subdomain: 'links',
      tls: 'enforced',
      capabilities: { receiving: 'enabled' },
    },
    description:
      'What is left out stays. A tracking subdomain can be changed, never removed. `capabilities.receiving` turns receiving on or off (on: a 400 naming the Regions SES receives in where the stack is in another); `capabilities.sending` stays `enabled`. 409 when other requests change it at the same time.',
  },
  'delete-domain': {
    ok: 'Removed: sending from it stops.',
    example: removed('domain', DOMAIN_ID),
  },
};

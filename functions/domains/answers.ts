import * as z from 'zod/mini';
import { named, reference, timestamp } from '../shared/answers.js';
import { DOMAIN_STATUSES, type DomainStatus } from './model.js';
import { TLS_MODES } from './tls-modes.js';

/**
 * The domain routes' answers (shared/answers.ts says how answers are described).
 */

export const domainRecordSchema = named(
  'DomainRecord',
  z.object({
    record: z.enum(['DKIM', 'SPF', 'Tracking', 'TrackingCAA', 'Receiving']),
    type: z.enum(['CNAME', 'MX', 'TXT', 'CAA']),
    name: z.string(),
    value: z.string(),
    priority: z.optional(z.number().check(z.int())),
    ttl: z.literal('Auto'),
    status: z.enum(DOMAIN_STATUSES),
  }),
  "A DNS record to publish, in Resend's terms: `DKIM`, `SPF` (the MAIL FROM subdomain's MX and TXT), with a tracking subdomain `Tracking` (its CNAME) and `TrackingCAA`, and with receiving enabled `Receiving` (the domain's MX to SES's inbound SMTP host, priority 10: `verified` once it is the domain's most preferred MX, `failed` while the account's active receipt rule set does not hold this service's rules).",
);

export const domainSchema = named(
  'Domain',
  z.object({
    object: z.literal('domain'),
    id: z.string(),
    name: z.string(),
    domain: z
      .string()
      .register(z.globalRegistry, { description: 'The same as `name` (our spec names it so).' }),
    status: z
      .enum(['pending', 'verified', 'failed'] as const satisfies readonly DomainStatus[])
      .register(z.globalRegistry, {
        description: "SES's verification state, in Resend's terms (a temporary failure is still `pending`).",
      }),
    created_at: timestamp,
    region: z.string(),
    open_tracking: z.boolean(),
    click_tracking: z.boolean(),
    tls: z.enum(TLS_MODES),
    tracking_subdomain: z.optional(z.string()),
    capabilities: z.object({ sending: z.literal('enabled'), receiving: z.enum(['enabled', 'disabled']) }),
    records: z.array(domainRecordSchema),
    tracking_host: z.optional(
      z
        .object({
          name: z.string(),
          status: z.enum(DOMAIN_STATUSES),
          problem: z.optional(z.string()),
          in_use: z.nullable(z.string()),
        })
        .register(z.globalRegistry, {
          description:
            "Ours, with a tracking subdomain: its host, its `Tracking` record's status (`verified` once tracked links use it), why it is not used yet (`problem`: not served over HTTPS with a certificate for its name, or the domain not verified by SES yet), and the host tracked links use now (`in_use`; `null`: SES's own), which stays the previous host until a new one is served.",
        }),
    ),
    receiving_problem: z.optional(
      z.string().register(z.globalRegistry, {
        description:
          "Ours, with receiving enabled: why mail to the domain does not reach the service now (the account's active receipt rule set does not hold this service's rules, or the domain's most preferred MX is another host); absent when nothing is known to be wrong.",
      }),
    ),
    mail_from_domain: z.string().register(z.globalRegistry, {
      description: 'Ours: the MAIL FROM (Return-Path) subdomain, so SPF aligns with the domain.',
    }),
    dmarc_record: z
      .object({
        type: z.literal('TXT'),
        name: z.string(),
        value: z.string(),
        ttl: z.literal('Auto'),
        status: z.literal('not_checked'),
      })
      .register(z.globalRegistry, {
        description: 'Ours: a suggested report-only DMARC record; SES does not check it (`not_checked`).',
      }),
  }),
  "A domain: Resend's domain object with the records to publish, and our own `domain`, `tls`, `tracking_host`, `receiving_problem`, `mail_from_domain` and `dmarc_record`.",
);

export const domainReferenceSchema = reference('domain');

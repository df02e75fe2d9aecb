import type { WebhookEvent, WebhookEventType } from '../webhooks/model.js';
import { checkedRecords, type Domain, resendDomainStatus } from './model.js';

/**
 * A domain event: Resend's domain object (with its records) under `data`, its status in Resend's
 * terms (see resendDomainStatus). `region` is the stack's; Resend's document lists four regions.
 * Its webhook events name the `Receiving` record `Receiving MX` (WebhookDomainRecord), so it is
 * named so here.
 */
export function domainEvent(
  type: Extract<WebhookEventType, `domain.${string}`>,
  at: string,
  domain: Domain,
  region: string,
): WebhookEvent {
  return {
    type,
    created_at: at,
    key: `${type}|${domain.id}|${at}|${domain.status}`,
    data: {
      id: domain.id,
      name: domain.domain,
      status: resendDomainStatus(domain.status),
      created_at: domain.created_at,
      region,
      records: checkedRecords(domain.records).map((r) =>
        r.record === 'Receiving' ? { ...r, record: 'Receiving MX' } : r,
      ),
    },
  };
}

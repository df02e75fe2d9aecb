/**
 * The API's answers as the console reads them: the types of the schemas the OpenAPI document is
 * made of (and the contract test holds the service's answers to), not declared again here. Type
 * imports only: nothing of the server, nor zod, goes into the console's bundle.
 */
import type * as z from 'zod/mini';
import type { apiKeySchema, createdApiKeySchema } from '../../functions/api-keys/answers.js';
import type {
  BroadcastStatus,
  BroadcastTotals,
  Broadcast as StoredBroadcast,
} from '../../functions/broadcasts/broadcast.js';
import type {
  Contact as StoredContact,
  Topic as StoredTopic,
  Subscription,
} from '../../functions/contacts/contact.js';
import type { domainRecordSchema, domainSchema } from '../../functions/domains/answers.js';
import type {
  attachmentSchema,
  emailListItemSchema,
  emailRecipientSchema,
  emailSchema,
} from '../../functions/emails/answers.js';
import type { BroadcastRecipientType, BroadcastTallyEntry } from '../../functions/emails/broadcast-tally.js';
import type { emailMetricsResponseSchema } from '../../functions/metrics/answers.js';
import type {
  AuthenticationResult,
  ReceivedAttachment as ReceivedAttachmentItem,
  ScanVerdict,
} from '../../functions/receiving/model.js';
import type { logListResponseSchema, logResponseSchema } from '../../functions/request-logs/reads.js';
import type { listOf } from '../../functions/shared/answers.js';
import type { suppressionListItemSchema } from '../../functions/suppressions/answers.js';
import type {
  templateListItemSchema,
  templateReferenceSchema,
  templateSchema,
} from '../../functions/templates/answers.js';
import type { usageSchema } from '../../functions/usage/answers.js';
import type {
  webhookAttemptSchema,
  webhookListItemSchema,
  webhookMessageListItemSchema,
  webhookSchema,
  webhookSecretSchema,
} from '../../functions/webhooks/answers.js';

/** A page of a list: `{object: "list", has_more, data}` (a list's answer is named in the plural). */
export type ListOf<Item extends z.ZodMiniType> = z.output<ReturnType<typeof listOf<Item>>>;

export type EmailListItem = z.output<typeof emailListItemSchema>;
export type Emails = ListOf<typeof emailListItemSchema>;
export type Email = z.output<typeof emailSchema>;
export type EmailRecipient = z.output<typeof emailRecipientSchema>;
export type Attachments = ListOf<typeof attachmentSchema>;

export type EmailMetrics = z.output<typeof emailMetricsResponseSchema>;
export type { Granularity, MetricName } from '../../functions/metrics/model.js';

export type Domain = z.output<typeof domainSchema>;
export type DomainRecord = z.output<typeof domainRecordSchema>;
export type Domains = ListOf<typeof domainSchema>;

export type ApiKey = z.output<typeof apiKeySchema>;
export type ApiKeys = ListOf<typeof apiKeySchema>;
export type CreatedApiKey = z.output<typeof createdApiKeySchema>;

export type Suppressions = ListOf<typeof suppressionListItemSchema>;

export type Template = z.output<typeof templateSchema>;
export type Templates = ListOf<typeof templateListItemSchema>;
export type TemplateReference = z.output<typeof templateReferenceSchema>;

export type Webhooks = ListOf<typeof webhookListItemSchema>;
export type Webhook = z.output<typeof webhookSchema>;
export type WebhookSecret = z.output<typeof webhookSecretSchema>;
export type WebhookMessage = z.output<typeof webhookMessageListItemSchema>;
export type WebhookMessages = ListOf<typeof webhookMessageListItemSchema>;
export type WebhookAttempts = ListOf<typeof webhookAttemptSchema>;

export type Logs = z.output<typeof logListResponseSchema>;
export type Log = z.output<typeof logResponseSchema>;

export type Usage = z.output<typeof usageSchema>;

/*
 * Received mail (GET /v1/emails/receiving…): Resend's GetReceivedEmailResponse,
 * ListReceivedEmailsResponse and ListAttachmentsResponse, with what SDK 6.38 reads beyond them (`raw`,
 * `received_for`) and the verdicts. Declared here from the model until the receiving routes' answer
 * schemas (functions/receiving/answers.ts) are in; then these become, like the rest:
 * ReceivedEmailListItem = z.output<typeof receivedEmailListItemSchema>, ReceivedEmails =
 * ListOf<typeof receivedEmailListItemSchema>, ReceivedEmail = z.output<typeof receivedEmailSchema>,
 * ReceivedAttachment(s) from receivedAttachmentSchema, DownloadLink = NonNullable<ReceivedEmail['raw']>.
 */

export type { AuthenticationResult, ScanVerdict };

/** A presigned link to download a file, and when it stops working. */
export interface DownloadLink {
  download_url: string;
  expires_at: string;
}

/** A received email's attachment as the attachments list gives it: with its link, unless not offered. */
export type ReceivedAttachment = Omit<ReceivedAttachmentItem, 'size'> & {
  size?: number;
} & Partial<DownloadLink>;

/** One received email of the list (verdicts only where the list gives them). */
export interface ReceivedEmailListItem {
  id: string;
  from: string;
  to: string[];
  cc?: string[] | null;
  bcc?: string[] | null;
  reply_to?: string[] | null;
  subject: string | null;
  message_id: string;
  created_at: string;
  attachments: Omit<ReceivedAttachment, keyof DownloadLink>[];
  received_for?: string[];
  authentication?: { spf: AuthenticationResult; dkim: AuthenticationResult; dmarc: AuthenticationResult };
  spam?: ScanVerdict;
  virus?: ScanVerdict;
}

export interface ReceivedEmails {
  object: 'list';
  has_more: boolean;
  data: ReceivedEmailListItem[];
}

/** GET /v1/emails/receiving/{id}: `raw` null when it is not offered (SES flagged a virus). */
export interface ReceivedEmail extends ReceivedEmailListItem {
  object: 'email';
  html: string | null;
  text: string | null;
  headers: Record<string, string> | null;
  received_for: string[];
  in_reply_to?: string | null;
  references?: string[] | null;
  raw: DownloadLink | null;
}

export interface ReceivedAttachments {
  object: 'list';
  has_more: boolean;
  data: ReceivedAttachment[];
}

/*
 * The audience (contacts, segments, topics): Resend's shapes from its OpenAPI document
 * (GetContactResponseSuccess, ListContactsResponseSuccess, ListSegmentsResponseSuccess,
 * ListContactSegmentsResponseSuccess, ListTopicsResponseSuccess, GetContactTopicsResponseSuccess),
 * declared here from the stored shapes (functions/contacts/contact.ts) until the routes' answer
 * schemas (functions/{contacts,segments,topics}/answers.ts) are in; then these become, like the
 * rest, z.output<typeof …Schema> and ListOf<typeof …Schema>.
 */

export type { Subscription };

/** A contact as the list gives it. */
export type ContactListItem = Pick<
  StoredContact,
  'id' | 'email' | 'first_name' | 'last_name' | 'unsubscribed' | 'created_at'
>;
export interface Contacts {
  object: 'list';
  has_more: boolean;
  data: ContactListItem[];
}
/** GET /v1/contacts/{id or email}: its properties by key (`{plan: "pro"}`). */
export interface Contact extends ContactListItem {
  object: 'contact';
  properties: Record<string, string | number>;
}

export interface Segment {
  id: string;
  name: string;
  created_at: string;
}
export interface Segments {
  object: 'list';
  has_more: boolean;
  data: Segment[];
}
/** GET /v1/contacts/{id}/segments: `created_at` is when the contact was added. */
export type ContactSegments = Segments;

export type Topic = Pick<
  StoredTopic,
  'id' | 'name' | 'description' | 'default_subscription' | 'visibility' | 'created_at'
>;
export interface Topics {
  object: 'list';
  has_more: boolean;
  data: Topic[];
}
/** GET /v1/contacts/{id}/topics: every topic, with the contact's choice (or the topic's default). */
export interface ContactTopic {
  id: string;
  name: string;
  description: string | null;
  subscription: Subscription;
}
export interface ContactTopics {
  object: 'list';
  has_more: boolean;
  data: ContactTopic[];
}

/*
 * Broadcasts (issue 41): Resend's GetBroadcastResponseSuccess, ListBroadcastsResponseSuccess,
 * ListBroadcastRecipientsResponseSuccess and ListBroadcastClickedLinksResponseSuccess, with what the
 * service adds to a broadcast (`progress`, `waiting`, `totals`) and its preview, declared here from
 * the stored shapes (functions/broadcasts/broadcast.ts) until the routes' answer schemas
 * (functions/broadcasts/answers.ts) are in; then these become, like the rest, z.output<typeof …Schema>.
 */

export type { BroadcastRecipientType, BroadcastStatus, BroadcastTotals };
/** A bounced recipient's kind, as the recipients list gives and filters it. */
export type BounceType = NonNullable<BroadcastTallyEntry['bounceType']>;

/**
 * One broadcast of the list (`GET /v1/broadcasts`). A field Resend's document types as a string is
 * left out while it has no value (absent or null here: both read as none).
 */
export type BroadcastListItem = Pick<StoredBroadcast, 'id' | 'status' | 'created_at'> & {
  name?: string | null;
  segment_id?: string | null;
  audience_id?: string | null;
  topic_id?: string | null;
  scheduled_at?: string | null;
  sent_at?: string | null;
};
export interface Broadcasts {
  object: 'list';
  has_more: boolean;
  data: BroadcastListItem[];
}

/** How far the fan-out has come: emails made, contacts left out and why, every page done. */
export interface BroadcastProgress {
  created: number;
  skipped: { unsubscribed: number; opted_out: number };
  done: boolean;
}

/** `GET /v1/broadcasts/{id}`: Resend's fields and the service's own (absent or null before they apply). */
export interface Broadcast extends BroadcastListItem {
  object: 'broadcast';
  from: string;
  subject: string;
  reply_to: string[] | null;
  preview_text?: string | null;
  html: string | null;
  text: string | null;
  progress?: BroadcastProgress | null;
  waiting?: StoredBroadcast['waiting'] | null;
  totals?: BroadcastTotals | null;
}

/** One recipient of a type (`GET /v1/broadcasts/{id}/recipients?type=`): `id` is an opaque cursor. */
export interface BroadcastRecipient {
  id: string;
  contact_id: string | null;
  email: string;
  count?: number;
  bounce_type?: BounceType;
  clicked_links?: { url: string; clicks: number }[];
  /** Ours: the recipient's email, and when it first reached this type. */
  email_id?: string;
  created_at?: string;
}
export interface BroadcastRecipients {
  object: 'list';
  has_more: boolean;
  data: BroadcastRecipient[];
}

/** One link of `GET /v1/broadcasts/{id}/clicked-links`: `id` is an opaque cursor. */
export interface BroadcastClickedLink {
  id: string;
  url: string;
  clicks: number;
  unique_clicks: number;
}
export interface BroadcastClickedLinks {
  object: 'list';
  has_more: boolean;
  data: BroadcastClickedLink[];
}

/** `POST /v1/broadcasts/{id}/preview`: the broadcast as one contact (or a sample with no fields) gets it. */
export interface BroadcastPreview {
  object: 'broadcast_preview';
  contact_id: string | null;
  email: string | null;
  subject: string;
  html: string | null;
  text: string | null;
}

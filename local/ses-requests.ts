import { createRequire } from 'node:module';
import { headerFields, headerValue } from '../functions/emails/mime.js';
import { parseAddress } from '../functions/shared/address.js';
import { configurationSetAction } from './ses-configuration-sets.js';
import type { SesReply } from './ses-identities.js';

/**
 * What the local SES (ses-stand-in.ts) reads of a request: the IAM action it is authorised as, and
 * for a SendEmail with raw content (an SMTP email, issue 42), the message itself, which the
 * emulator's store then keeps as SES got it, beside its own parse of it.
 */

export interface SendEmailRequest {
  ConfigurationSetName?: string;
  FromEmailAddress?: string;
  Destination?: { ToAddresses?: string[]; CcAddresses?: string[]; BccAddresses?: string[] };
  Content?: {
    Simple?: { Subject?: { Data?: string }; Body?: { Html?: { Data?: string } } };
    /** The message, base64 on the wire (the SDK encodes it). */
    Raw?: { Data?: string };
  };
  EmailTags?: { Name: string; Value: string }[];
  ConfigurationOverrides?: {
    Tracking?: {
      OpenTrackingEnabled?: 'ENABLED' | 'DISABLED';
      ClickTrackingEnabled?: 'ENABLED' | 'DISABLED';
    };
  };
}

export const SEND_EMAIL_PATH = '/v2/email/outbound-emails';
export const SUPPRESSED_PATH = '/v2/email/suppression/addresses/';
const ACCOUNT_PATH = '/v2/email/account';

const json = (body: Buffer): Record<string, unknown> => {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/**
 * The IAM action (ses:<action>) of an SES v2 request the local SES answers, by its path; a
 * SendEmail with raw content is authorised as ses:SendRawEmail, as AWS does (its refusal of a v2
 * raw send names ses:SendRawEmail: anymail/django-anymail#384).
 */
export function sesAction(method: string, url: string, body: Buffer): string | undefined {
  const path = url.split('?')[0] ?? '';
  if (method === 'POST' && path === SEND_EMAIL_PATH)
    return (json(body).Content as SendEmailRequest['Content'])?.Raw ? 'SendRawEmail' : 'SendEmail';
  if (method === 'GET' && path === ACCOUNT_PATH) return 'GetAccount';
  if (method === 'DELETE' && path.startsWith(SUPPRESSED_PATH)) return 'DeleteSuppressedDestination';
  if (path.startsWith('/v2/email/configuration-sets')) return configurationSetAction(method, path);
  if (!path.startsWith('/v2/email/identities')) return undefined;
  if (path.endsWith('/mail-from')) return 'PutEmailIdentityMailFromAttributes';
  if (method === 'POST') return body.length ? 'CreateEmailIdentity' : undefined;
  if (method === 'GET') return 'GetEmailIdentity';
  if (method === 'DELETE') return 'DeleteEmailIdentity';
  return undefined;
}

/** A CreateEmailIdentity or CreateConfigurationSet with tags, which IAM also checks ses:TagResource for. */
export const tagged = (body: Buffer) => ((json(body).Tags as unknown[] | undefined) ?? []).length > 0;

/** What SES answers a role that lacks the action (the shape of IAM's refusal through SES v2). */
export const accessDenied = (caller: string, action: string): SesReply => ({
  status: 403,
  errorType: 'AccessDeniedException',
  body: {
    message: `User: arn:aws:sts::000000000000:assumed-role/${caller}/${caller} is not authorized to perform: ses:${action} because no identity-based policy allows the ses:${action} action`,
  },
});

/** A raw send's message, as SES gets it; undefined for Simple content. */
export function rawMessageOf(request: SendEmailRequest): Buffer | undefined {
  const data = request.Content?.Raw?.Data;
  return typeof data === 'string' ? Buffer.from(data, 'base64') : undefined;
}

/** What SES reads of a raw message's header: its From address (when the request names none) and subject. */
export function rawHeader(raw: Buffer): { from: string; subject: string } {
  const fields = headerFields(raw);
  const from = headerValue(fields, 'from') ?? '';
  const parsed = parseAddress(/<([^<>]+)>/.exec(from)?.[1] ?? from);
  return { from: 'error' in parsed ? from : parsed.email, subject: headerValue(fields, 'subject') ?? '' };
}

/** An email as the emulator keeps it, with what the stand-in adds to a raw one. */
interface StoredRawEmail {
  messageId: string;
  destination: { to: string[]; cc: string[]; bcc: string[] };
  /** The message as SES got it (base64): what a test compares with what the client sent. */
  raw?: string;
}

const require = createRequire(import.meta.url);

/**
 * Keeps a raw message the emulator took in its store (its `GET /store`), as SES got it, and its
 * destination as the request gave it (SES v2 sends a raw message to the Destination, whatever its
 * To and Cc headers say; the emulator reads them from the headers).
 */
export function keepRaw(messageId: string, raw: Buffer, request: SendEmailRequest): void {
  const { emails } = (
    require('aws-ses-v2-local/dist/store.js') as { getStoreReadonly(): { emails: StoredRawEmail[] } }
  ).getStoreReadonly();
  const stored = emails.find((email) => email.messageId === messageId);
  if (!stored) return;
  stored.raw = raw.toString('base64');
  if (request.Destination)
    stored.destination = {
      to: request.Destination.ToAddresses ?? [],
      cc: request.Destination.CcAddresses ?? [],
      bcc: request.Destination.BccAddresses ?? [],
    };
}

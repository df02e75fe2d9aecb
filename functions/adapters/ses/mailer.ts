import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { SenderOptions } from '../../domains/model.js';
import { type Mailer, MailerError, type OutgoingFile, type SendJob } from '../../emails/ports.js';
import { parseAddress } from '../../shared/address.js';
import { neverSent, type SesConnections } from './connections.js';

/** The message tag that carries our email id; SES returns it on every event of the message. */
export const EMAIL_ID_TAG = 'email_id';
/** The message tag that carries the template an email was rendered from, for its events' webhooks. */
export const TEMPLATE_ID_TAG = 'esvc_template';
/** The message tag that carries the broadcast an email was fanned out from, for its events (issue 41). */
export const BROADCAST_ID_TAG = 'esvc_broadcast';

/** SES errors after which the same email will never be accepted (per the SES v2 API reference). */
const REJECTED = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'BadRequestException',
  'NotFoundException',
]);

/** SES's throttle answers (the v2 API's 429, and the common throttling errors). */
const THROTTLED = new Set(['TooManyRequestsException', 'ThrottlingException', 'Throttling']);

/** Errors raised before a connection to SES was made: SES never saw the request. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

const enabled = (on: boolean | undefined) => (on ? ('ENABLED' as const) : ('DISABLED' as const));

/**
 * Sends through SES v2 with a configuration set whose event destination reports delivery outcomes:
 * the stack's, or the sender's domain's own (its TLS policy and tracking host). A send whose
 * connection could not be made (SES never got a byte of it) is made again at once, on a new
 * connection, once; `connections`: the client's, whose idle sockets `closeIdle` closes.
 */
export class SesMailer implements Mailer {
  constructor(
    private readonly ses: SESv2Client,
    private readonly configurationSetName: string,
    private readonly connections?: SesConnections,
  ) {}

  closeIdle(): void {
    this.connections?.closeIdle();
  }

  async send({
    id,
    content,
    files = [],
    sender,
    raw,
  }: SendJob & { files?: OutgoingFile[]; sender?: SenderOptions; raw?: Uint8Array }): Promise<{
    messageId: string;
  }> {
    // Optional lists are left out when empty rather than sent as [].
    const Destination = {
      // An SMTP email may have Bcc recipients only.
      ToAddresses: nonEmpty(content.to.map(toSesAddress)),
      CcAddresses: nonEmpty(content.cc.map(toSesAddress)),
      BccAddresses: nonEmpty(content.bcc.map(toSesAddress)),
    };
    const command = new SendEmailCommand({
      // An SMTP email (raw): its From header is the client's; this names the identity SES checks.
      FromEmailAddress: raw ? bareAddress(content.from) : toSesAddress(content.from),
      // A raw message goes to these recipients whatever its To and Cc headers say (SES v2 takes the
      // Destination as the envelope): a suppressed address may stand in the header, and gets nothing.
      Destination,
      ...(raw ? {} : { ReplyToAddresses: nonEmpty(content.reply_to.map(toSesAddress)) }),
      Content: raw ? { Raw: { Data: raw } } : simpleContent(content, files),
      ConfigurationSetName: sender?.configurationSet ?? this.configurationSetName,
      // Every set's event destination takes Open and Click events, and such a destination by
      // itself turns tracking on for every email sent with the set: each send says what its
      // domain chose instead (off unless the domain turned it on). One override per send rather
      // than a set per combination of settings: a change applies to the next send, no set is
      // created for it, and domains without TLS or a tracking host share the stack's set.
      ConfigurationOverrides: {
        Tracking: {
          OpenTrackingEnabled: enabled(sender?.openTracking),
          ClickTrackingEnabled: enabled(sender?.clickTracking),
        },
      },
      // Ours first; the user's tags come back on every event of the message too.
      EmailTags: [
        { Name: EMAIL_ID_TAG, Value: id },
        ...(content.template ? [{ Name: TEMPLATE_ID_TAG, Value: content.template.id }] : []),
        ...(content.broadcast_id ? [{ Name: BROADCAST_ID_TAG, Value: content.broadcast_id }] : []),
        ...content.tags.map((tag) => ({ Name: tag.name, Value: tag.value })),
      ],
    });
    let result: { MessageId?: string };
    try {
      result = await this.ses.send(command).catch((error) => {
        // SES never got it: once more, at once (a new connection).
        if (toMailerError(error).kind === 'unreached') return this.ses.send(command);
        throw error;
      });
    } catch (error) {
      throw toMailerError(error);
    }
    // SES answered 200: it has the email, even if the answer lacks its id.
    if (!result.MessageId)
      throw new MailerError('SES accepted the email but returned no MessageId', 'unknown', 'NoMessageId');
    return { messageId: result.MessageId };
  }
}

const nonEmpty = (list: string[]) => (list.length ? list : undefined);

/** The address alone (an SMTP email's From names the identity; its header keeps the name). */
const bareAddress = (address: string) => {
  const parsed = parseAddress(address);
  return 'error' in parsed ? address : parsed.email;
};

/** An API email's content: SES v2 builds the MIME message from its parts. */
function simpleContent(content: SendJob['content'], files: OutgoingFile[]) {
  return {
    Simple: {
      Subject: { Data: content.subject, Charset: 'UTF-8' },
      Body: {
        ...(content.html ? { Html: { Data: content.html, Charset: 'UTF-8' } } : {}),
        ...(content.text ? { Text: { Data: content.text, Charset: 'UTF-8' } } : {}),
      },
      ...(Object.keys(content.headers).length
        ? { Headers: Object.entries(content.headers).map(([Name, Value]) => ({ Name, Value })) }
        : {}),
      // SES v2's Simple content takes files itself (it builds the MIME message): no raw MIME here.
      ...(files.length
        ? {
            Attachments: files.map((file) => ({
              FileName: file.filename,
              RawContent: file.bytes,
              ContentType: file.content_type,
              ContentDisposition:
                file.disposition === 'inline' ? ('INLINE' as const) : ('ATTACHMENT' as const),
              ...(file.content_id ? { ContentId: file.content_id } : {}),
              ContentTransferEncoding: 'BASE64' as const,
            })),
          }
        : {}),
    },
  };
}

type SdkError = Error & { code?: string; $metadata?: { httpStatusCode?: number } };

/**
 * What an error of SendEmail says about whether SES has the email:
 * - `rejected`: SES refused it for good (MessageRejected, an unverified MAIL FROM domain, a bad request);
 * - `rate`: SES throttled it, "Maximum sending rate exceeded" (TooManyRequestsException, 429; the
 *   common ThrottlingException too): it did not take it;
 * - `quota`: the account's 24-hour quota is spent (LimitExceededException, or "Daily message quota
 *   exceeded" in a throttle): it did not take it;
 * - `paused`: sending is paused or the account suspended (SendingPausedException,
 *   AccountSuspendedException): it did not take it;
 * - `refused`: SES answered another 4xx (access denied), or there were no credentials: it did not
 *   take the email, and trying again later is safe;
 * - `unreached`: SES never got the request: no connection could be made (refused, no such host,
 *   the connect timeout), or it failed before its TCP connect and TLS handshake completed (TLS
 *   sends nothing of the request before then; ses/connections.ts marks such errors): trying again
 *   at once is safe;
 * - `unknown`: the request may have reached SES and been accepted (a timeout or a broken connection
 *   after sending, a 5xx, a 2xx that could not be read): trying again could send it twice.
 */
export function toMailerError(error: unknown): MailerError {
  if (error instanceof MailerError) return error;
  const e = (error instanceof Error ? error : new Error(String(error))) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const kind = ((): MailerError['kind'] => {
    if (neverSent(e)) return 'unreached';
    if (REJECTED.has(e.name)) return 'rejected';
    if (e.name === 'LimitExceededException' || /daily message quota/i.test(e.message)) return 'quota';
    if (e.name === 'SendingPausedException' || e.name === 'AccountSuspendedException') return 'paused';
    if (THROTTLED.has(e.name) || status === 429) return 'rate';
    if (status !== undefined && status >= 400 && status < 500) return 'refused';
    if (status !== undefined) return 'unknown';
    if (e.code && NEVER_SENT.has(e.code)) return 'unreached';
    // The SDK's connection timeout: the socket never connected, so nothing was sent.
    if (e.name === 'TimeoutError' && /did not establish a connection/.test(e.message)) return 'unreached';
    if (e.name === 'CredentialsProviderError') return 'refused';
    return 'unknown';
  })();
  return new MailerError(e.message, kind, e.code && e.name === 'Error' ? e.code : e.name);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: any non-ASCII character
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * SES takes a display name with non-ASCII characters only as RFC 2047 encoded-words
 * (`=?UTF-8?B?…?=`, at most 75 characters each); ASCII names pass as they are.
 */
export function toSesAddress(address: string): string {
  const parsed = parseAddress(address);
  if ('error' in parsed || !parsed.name || !NON_ASCII.test(parsed.name)) return address;
  const words: string[] = [];
  let chunk = '';
  for (const char of parsed.name) {
    // 45 bytes of UTF-8 are 60 characters of base64: the word stays under 75 with its 12 of framing.
    if (Buffer.byteLength(chunk + char) > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  words.push(chunk);
  const encoded = words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ');
  return `${encoded} <${parsed.email}>`;
}

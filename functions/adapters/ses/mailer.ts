import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { parseAddress } from '../../core/address.js';
import { type Mailer, MailerError, type SendJob } from '../../core/ports.js';

/** The message tag that carries our email id; SES returns it on every event of the message. */
export const EMAIL_ID_TAG = 'email_id';

/** SES errors after which the same email will never be accepted (per the SES v2 API reference). */
const PERMANENT = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'BadRequestException',
  'NotFoundException',
]);

/** Sends through SES v2 with the configuration set whose event destination reports delivery outcomes. */
export class SesMailer implements Mailer {
  constructor(
    private readonly ses: SESv2Client,
    private readonly configurationSetName: string,
  ) {}

  async send({ id, content }: SendJob): Promise<{ messageId: string }> {
    const command = new SendEmailCommand({
      FromEmailAddress: toSesAddress(content.from),
      // Optional lists are left out when empty rather than sent as [].
      Destination: {
        ToAddresses: content.to.map(toSesAddress),
        CcAddresses: nonEmpty(content.cc.map(toSesAddress)),
        BccAddresses: nonEmpty(content.bcc.map(toSesAddress)),
      },
      ReplyToAddresses: nonEmpty(content.reply_to.map(toSesAddress)),
      Content: {
        Simple: {
          Subject: { Data: content.subject, Charset: 'UTF-8' },
          Body: {
            ...(content.html ? { Html: { Data: content.html, Charset: 'UTF-8' } } : {}),
            ...(content.text ? { Text: { Data: content.text, Charset: 'UTF-8' } } : {}),
          },
        },
      },
      ConfigurationSetName: this.configurationSetName,
      EmailTags: [{ Name: EMAIL_ID_TAG, Value: id }],
    });
    try {
      const result = await this.ses.send(command);
      if (!result.MessageId) throw new MailerError('SES returned no MessageId', true, 'NoMessageId');
      return { messageId: result.MessageId };
    } catch (error) {
      throw toMailerError(error);
    }
  }
}

const nonEmpty = (list: string[]) => (list.length ? list : undefined);

export function toMailerError(error: unknown): MailerError {
  if (error instanceof MailerError) return error;
  const name = error instanceof Error ? error.name : 'UnknownError';
  const message = error instanceof Error ? error.message : String(error);
  // Throttling, sending paused, daily quota reached, 5xx and network errors: SES may accept it later.
  return new MailerError(message, !PERMANENT.has(name), name);
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

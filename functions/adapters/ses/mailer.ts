import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
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
      FromEmailAddress: content.from,
      Destination: { ToAddresses: content.to, CcAddresses: content.cc, BccAddresses: content.bcc },
      ReplyToAddresses: content.reply_to.length ? content.reply_to : undefined,
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

export function toMailerError(error: unknown): MailerError {
  if (error instanceof MailerError) return error;
  const name = error instanceof Error ? error.name : 'UnknownError';
  const message = error instanceof Error ? error.message : String(error);
  // Throttling, sending paused, daily quota reached, 5xx and network errors: SES may accept it later.
  return new MailerError(message, !PERMANENT.has(name), name);
}

import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import { emailContent } from '../support/fakes.js';

/**
 * The mailer's raw send (an SMTP email, issue 42), in the shape SES v2's SendEmail documents:
 * Content.Raw with the message's bytes, the recipients as the Destination, and the same
 * configuration set, tracking overrides and tags (ours first) as a Simple send.
 */
const ses = mockClient(SESv2Client);
beforeEach(() => {
  ses.reset();
  ses.on(SendEmailCommand).resolves({ MessageId: 'ses-raw-1' });
});

describe('SesMailer with raw content', () => {
  it('sends the bytes as Content.Raw to the content’s recipients, from the bare From address, tags and set as any send', async () => {
    const raw = new Uint8Array(Buffer.from('From: Ann <ann@acme.test>\r\nTo: x@example.test\r\n\r\nHi\r\n'));
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'stack-set');
    const result = await mailer.send({
      id: 'em_raw',
      content: emailContent({
        from: 'Ann <ann@acme.test>',
        to: ['x@example.test'],
        bcc: ['hidden@example.test'],
        reply_to: ['replies@acme.test'],
        tags: [{ name: 'campaign', value: 'spring' }],
        html: '<p>parsed, not sent</p>',
      }),
      raw,
      sender: { openTracking: true, clickTracking: false, configurationSet: 'set-of-acme' },
    });
    expect(result).toEqual({ messageId: 'ses-raw-1' });
    const [call] = ses.commandCalls(SendEmailCommand);
    const input = call?.args[0].input;
    expect(input).toEqual({
      FromEmailAddress: 'ann@acme.test',
      Destination: { ToAddresses: ['x@example.test'], BccAddresses: ['hidden@example.test'] },
      Content: { Raw: { Data: raw } },
      ConfigurationSetName: 'set-of-acme',
      ConfigurationOverrides: {
        Tracking: { OpenTrackingEnabled: 'ENABLED', ClickTrackingEnabled: 'DISABLED' },
      },
      EmailTags: [
        { Name: 'email_id', Value: 'em_raw' },
        { Name: 'campaign', Value: 'spring' },
      ],
    });
  });
});

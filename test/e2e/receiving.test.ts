import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, runSdkProgram } from '../support/npm-start.js';

/**
 * Receiving end to end over HTTPS with `npm start`: a message nodemailer sends to the local inbound
 * SMTP endpoint becomes a received email (through the receipt rules' writer, the raw message in the
 * local S3 and receive-email invoked with SES's receipt event), a signed `email.received` webhook,
 * and what the official SDK reads and forwards (test/e2e/sdk/receiving-user.ts).
 */
let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ service, seen, stop } = await runSdkProgram('test/e2e/sdk/receiving-user.ts'));
}, 150_000);
afterAll(() => stop?.());

describe('receiving mail with npm start and the official resend SDK', () => {
  it('prints its inbound SMTP endpoint with the other addresses', () => {
    expect(service.inboundSmtp).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
  });

  it('takes the message once the receipt rules hold the domain, and refuses a domain without receiving with 550 5.1.1', () => {
    expect(seen.domain.capabilities).toMatchObject({ receiving: 'enabled' });
    expect(seen.domainRecords).toContainEqual(
      expect.objectContaining({
        record: 'Receiving',
        type: 'MX',
        name: 'inbox.test',
        value: 'inbound-smtp.us-east-1.amazonaws.com',
        priority: 10,
      }),
    );
    expect(seen.smtpResponse).toMatch(/^250 /);
    expect(seen.refused).toMatchObject({ responseCode: 550, rejected: ['someone@plain.test'] });
    expect(seen.refused.response).toMatch(/^550 5\.1\.1 /);
  });

  it('sends a signed email.received webhook in Resend’s payload', () => {
    expect(seen.hookVerified).toBe(true);
    expect(seen.hook).toMatchObject({
      type: 'email.received',
      data: {
        email_id: expect.any(String),
        from: 'Sender <sender@outside.test>',
        to: [expect.stringContaining('hello@inbox.test')],
        cc: [expect.stringContaining('team@inbox.test')],
        received_for: expect.arrayContaining(['hello@inbox.test', 'team@inbox.test']),
        message_id: '<q3-report@outside.test>',
        subject: 'Quarterly report',
        attachments: [
          {
            id: expect.any(String),
            filename: 'report.bin',
            content_type: 'application/octet-stream',
            content_disposition: 'attachment',
            content_id: null,
          },
        ],
      },
    });
  });

  it('reads it back with emails.receiving.get and list', () => {
    const id = seen.hook.data.email_id;
    expect(seen.get).toMatchObject({
      object: 'email',
      id,
      from: 'Sender <sender@outside.test>',
      subject: 'Quarterly report',
      text: expect.stringContaining('The report is attached.'),
      html: expect.stringContaining('<b>attached</b>'),
      message_id: '<q3-report@outside.test>',
      received_for: expect.arrayContaining(['hello@inbox.test']),
      raw: { download_url: expect.any(String), expires_at: expect.any(String) },
    });
    // Verdicts the local twin cannot compute are `unknown`.
    expect(seen.get.authentication).toEqual({ spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' });
    expect(seen.list.data.map((e: { id: string }) => e.id)).toContain(id);
  });

  it('lists and gets the attachment, whose download is the original bytes', () => {
    expect(seen.attachments.data).toHaveLength(1);
    expect(seen.attachment).toMatchObject({
      object: 'attachment',
      filename: 'report.bin',
      content_type: 'application/octet-stream',
      size: 150 * 1024,
      download_url: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(seen.download).toMatchObject({ status: 200, equal: true });
    expect(seen.download.disposition).toMatch(/^attachment/);
  });

  it('forwards it, passthrough and wrapped, through our own send path, and the local SES has both', () => {
    expect(seen.forwardedEmail).toMatchObject({ last_event: 'delivered', subject: 'Quarterly report' });
    expect(seen.wrappedEmail).toMatchObject({ last_event: 'delivered', subject: 'Fwd: Quarterly report' });
    const passthrough = seen.stored.find((e: { subject: string }) => e.subject === 'Quarterly report');
    expect(passthrough).toMatchObject({
      text: expect.stringContaining('The report is attached.'),
      attachments: [{ filename: 'report.bin', equalsOriginal: true }],
    });
    const wrapped = seen.stored.find((e: { subject: string }) => e.subject === 'Fwd: Quarterly report');
    expect(wrapped).toMatchObject({
      text: 'See the message below.',
      attachments: [
        { filename: 'forwarded_message.eml', contentType: 'message/rfc822', equalsOriginal: false },
      ],
    });
  });
});

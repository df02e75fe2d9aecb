/**
 * npm start's audience queues and PUBLIC_ORIGIN: the contact imports' and audience clean-up
 * queues as the stack makes them (the same receives and visibility: functions/shared/
 * audience-queues.ts), and unsubscribe links' origin the gateway's own, its port chosen before any
 * function loaded (port 0 too).
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE_QUEUES, visibilitySecondsOf } from '../../functions/shared/audience-queues.js';
import { type LocalService, startLocalService } from '../../local/service.js';

let service: LocalService;
beforeAll(async () => {
  service = await startLocalService({ port: 0, dataDir: null, viewerPort: 0, inboundSmtpPort: 0 });
});
afterAll(() => service?.stop());

describe('npm start runs the audience as the stack does', () => {
  it("sets PUBLIC_ORIGIN to the gateway's https origin, whatever port it was given", () => {
    expect(process.env.PUBLIC_ORIGIN).toBe(new URL(service.baseUrl).origin);
    expect(process.env.PUBLIC_ORIGIN).toMatch(/^https:\/\/localhost:\d+$/);
    expect(process.env.PUBLIC_ORIGIN).not.toBe('https://localhost:0');
  });

  it('makes both queues with their dead-letter queues, their receives and visibility, and gives their URLs', async () => {
    const sqs = new SQSClient({
      endpoint: service.endpoints.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      for (const [url, deadLetters, settings] of [
        [
          service.queues.contactImports,
          service.queues.contactImportDeadLetters,
          AUDIENCE_QUEUES.contactImports,
        ],
        [
          service.queues.audienceCleanup,
          service.queues.audienceCleanupDeadLetters,
          AUDIENCE_QUEUES.audienceCleanup,
        ],
      ] as const) {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: url,
            AttributeNames: ['RedrivePolicy', 'VisibilityTimeout'],
          }),
        );
        const { Attributes: dlq } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: deadLetters, AttributeNames: ['QueueArn'] }),
        );
        expect(Number(Attributes?.VisibilityTimeout)).toBe(visibilitySecondsOf(settings));
        expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toMatchObject({
          deadLetterTargetArn: dlq?.QueueArn,
          maxReceiveCount: settings.maxReceiveCount,
        });
      }
      expect(process.env.CONTACT_IMPORT_QUEUE_URL).toBe(service.queues.contactImports);
      expect(process.env.AUDIENCE_CLEANUP_QUEUE_URL).toBe(service.queues.audienceCleanup);
    } finally {
      sqs.destroy();
    }
  });
});

import { newSqsClient } from '../functions/adapters/aws-clients.js';
import { type EmulatorOptions, startEmulators } from './emulators.js';
import { type SesStandIn, type SesStandInSettings, startSesStandIn } from './ses-stand-in.js';
import { partData, servePart } from './threads.js';

/**
 * The emulators' thread (see startEmulatorsThread): starts them, then answers `calls` and `stop`,
 * and runs the local SES in front of the SES emulator once the service has made its events queue
 * (`startSes`, then `sesIdle`, `sesBusy`, `sesRepublish`, `sesAcceptsRecipient`).
 */
await servePart(async () => {
  const { calls, stop, ...started } = await startEmulators(partData<EmulatorOptions>());
  let ses: SesStandIn | undefined;
  const standIn = () => {
    if (!ses) throw new Error('the local SES is not started');
    return ses;
  };
  return {
    started,
    methods: {
      calls: () => calls(),
      startSes: async (settings: SesStandInSettings) => {
        ses = await startSesStandIn({
          ...settings,
          emulatorEndpoint: started.sesEndpoint,
          sqs: newSqsClient({
            endpoint: started.sqsEndpoint,
            region: 'us-east-1',
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          }),
          log: (message, fields) => console.warn(JSON.stringify({ level: 'WARN', message, ...fields })),
        });
        return { endpoint: ses.endpoint, trackingUrl: ses.trackingUrl };
      },
      sesIdle: () => standIn().idle(),
      sesBusy: () => standIn().busy(),
      sesRepublish: (emailIds: string[]) => standIn().republish(new Set(emailIds)),
      sesSendingPaused: (paused: boolean) => standIn().account.setSendingPaused(paused),
      sesAcceptsRecipient: (address: string) => standIn().receiptRules.acceptsRecipient(address),
      stop: async () => {
        await ses?.stop();
        await stop();
      },
    },
  };
});

import { receivedEmailRepository } from '../adapters/dynamodb/repositories.js';
import { newS3Client } from '../adapters/s3/client.js';
import { S3ReceivedMailStore } from '../adapters/s3/received-mail.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps } from '../wiring.js';

/**
 * The receiving routes' wiring. Apart from functions/wiring.ts, as wiring/attachments.ts is: the
 * S3 client and its presigner are loaded at init by the routes whose every request uses them (the
 * email, which reads its bodies and signs its raw message's link; the attachment routes, which sign
 * links), and by no other function, the list included (it reads the table alone).
 */

/** `GET /v1/emails/receiving`: the table only. */
export function receivedListDeps() {
  return apiDeps('list-received-emails', { received: receivedEmailRepository });
}

/** The routes that read received mail's objects and sign its download links. */
export function receivedContentDeps(
  name: 'get-received-email' | 'list-received-attachments' | 'get-received-attachment',
) {
  const { CONTENT_BUCKET, RECEIVED_VIRUS_DOWNLOADS } = loadConfig(
    'CONTENT_BUCKET',
    'RECEIVED_VIRUS_DOWNLOADS',
  );
  return {
    ...apiDeps(name, { received: receivedEmailRepository }),
    mail: new S3ReceivedMailStore(newS3Client(), CONTENT_BUCKET),
    virusDownloads: RECEIVED_VIRUS_DOWNLOADS === 'true',
  };
}

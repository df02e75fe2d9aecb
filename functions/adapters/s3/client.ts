import { S3Client } from '@aws-sdk/client-s3';
import { withPlugins } from '../aws-clients.js';

/**
 * S3 for attachments and large bodies. A custom endpoint (the local emulator, via
 * AWS_ENDPOINT_URL_S3) is addressed path-style, as emulators expect; on AWS, virtual-hosted.
 */
export const newS3Client = () =>
  withPlugins(new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) }));

import { SESClient } from '@aws-sdk/client-ses';
import { withPlugins } from '../aws-clients.js';

/**
 * SES's v1 API, for its receipt rules only (receiving has no v2 API). A module of its own, so only
 * the functions that manage receipt rules load @aws-sdk/client-ses. The SDK's default retries: a
 * receipt-rule call refused for SES's rate (`Throttling`) is retried after a backoff, and every
 * call the service makes is safe to repeat.
 */
export const newSesV1Client = () => withPlugins(new SESClient({}));

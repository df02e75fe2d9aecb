import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ApiError } from '../shared/errors.js';

/** The header CloudFront adds to every request it forwards, when the front door is on. */
export const FRONT_DOOR_HEADER = 'x-origin-verify';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Behind the front door, only requests CloudFront forwarded (carrying its secret header) are
 * served: one sent straight to API Gateway would skip the firewall's per-address rate limit.
 * Compared in constant time, before anything else is read.
 */
export const frontDoorOnly = (secret: string): MiddlewareObj<APIGatewayProxyEventV2> => {
  const expected = digest(secret);
  return {
    before: async ({ event }) => {
      const sent = event.headers?.[FRONT_DOOR_HEADER];
      if (sent === undefined || !timingSafeEqual(digest(sent), expected))
        throw new ApiError(
          403,
          'invalid_access',
          'This API is served through its front door (CloudFront); requests sent straight to API Gateway are refused.',
        );
    },
  };
};

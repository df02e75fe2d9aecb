import type { TrackingFront } from '../../domains/ports.js';
import { onFirstUse } from '../on-first-use.js';
import type { HttpsTrackingFrontOptions } from './tracking-front.js';

/**
 * The look at a tracking host over HTTPS (adapters/http/tracking-front.ts), built on first use: a
 * domain function needs it only when a new tracking host is about to go into a set.
 */
export function trackingFrontOnFirstUse(
  policy: { allowLoopback: boolean },
  options: HttpsTrackingFrontOptions = {},
): TrackingFront {
  const front = onFirstUse(async () => {
    const { HttpsTrackingFront } = await import('./tracking-front.js');
    return new HttpsTrackingFront(policy, options);
  });
  return { problem: async (host) => (await front()).problem(host) };
}

import type { TrackingFront } from '../../domains/ports.js';
import type { FileFetcher } from '../../shared/ports.js';
import type { EndpointGuard } from '../../webhooks/ports.js';
import { onFirstUse } from '../on-first-use.js';
import type { HttpsTrackingFrontOptions } from './tracking-front.js';

/** The guarded fetch of attachments' `path` (with ipaddr.js), built on first use. */
export function fileFetcherOnFirstUse(
  policy: { allowLoopback: boolean },
  options: { fetchTimeoutMs: number },
): FileFetcher {
  const fetcher = onFirstUse(async () => {
    const { GuardedHttp } = await import('./guarded-http.js');
    return new GuardedHttp(policy, options);
  });
  return { fetch: async (url, maxBytes) => (await fetcher()).fetch(url, maxBytes) };
}

/**
 * The webhook endpoint guard (DNS and ipaddr.js), built on first use: for PATCH /v1/webhooks/{id},
 * which checks an endpoint only when it changes.
 */
export function endpointGuardOnFirstUse(policy: { allowLoopback: boolean }): EndpointGuard {
  const guard = onFirstUse(async () => {
    const { GuardedHttp } = await import('./guarded-http.js');
    return new GuardedHttp(policy);
  });
  return { check: async (url) => (await guard()).check(url) };
}

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

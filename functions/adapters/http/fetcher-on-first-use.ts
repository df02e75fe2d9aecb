import type { FileFetcher } from '../../shared/ports.js';
import type { EndpointGuard } from '../../webhooks/ports.js';
import { onFirstUse } from '../on-first-use.js';

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

import type { FileFetcher } from '../../core/ports.js';
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

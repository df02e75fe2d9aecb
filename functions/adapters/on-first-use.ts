/**
 * Adapters most requests of a function never call, whose code (and AWS client) is loaded with
 * `import()` on the first call instead of at init: the bundle splits it into a chunk of its own
 * (lib/bundling.ts), so a cold start does not pay for it. A load that fails fails that call (the
 * request's 500), and the next call tries again.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

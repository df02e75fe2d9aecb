import { createHash, timingSafeEqual } from 'node:crypto';
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerResult } from 'aws-lambda';

/** The header CloudFront adds to every request it forwards, when the front door is on. */
export const FRONT_DOOR_HEADER = 'x-origin-verify';

/** The front door's authorizer function (functions/handlers/), made by the stack only with the front door on. */
export const FRONT_DOOR_AUTHORIZER = 'authorize-front-door';

/**
 * How long API Gateway keeps the authorizer's answer for one value of the header (its cache key),
 * and how long an instance keeps the secret before it reads it again when a value does not match.
 */
export const FRONT_DOOR_CACHE_SECONDS = 300;

const digest = (value: string) => createHash('sha256').update(value).digest();

export interface FrontDoorAuthorizerDeps {
  /** The secret CloudFront sends (read from Secrets Manager; never in the function's environment). */
  readonly readSecret: () => Promise<string>;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * Behind the front door, API Gateway asks this before every route (an HTTP API Lambda authorizer,
 * simple responses): is the request one CloudFront forwarded, carrying its secret header? A request
 * without the header never gets here (API Gateway answers 401 itself: the header is the identity
 * source), and the answer for one value is cached by API Gateway, so CloudFront's requests cost one
 * invocation per cache period. The secret is read on first use and kept; a value that does not
 * match makes an instance whose copy is older than the cache period read it again (a secret
 * changed since), so a stale copy refuses CloudFront for at most that long. Compared in constant
 * time. A secret that cannot be read is an error (API Gateway answers 500): never a pass.
 */
export function makeFrontDoorAuthorizer(deps: FrontDoorAuthorizerDeps) {
  const now = deps.now ?? Date.now;
  let kept: { digest: Promise<Buffer>; at: number } | undefined;
  const secretDigest = (fresh: boolean) => {
    if (!kept || fresh) {
      const read = deps.readSecret().then(digest);
      const entry = { digest: read, at: now() };
      kept = entry;
      // A failed read is not kept: the next request reads again.
      read.catch(() => {
        if (kept === entry) kept = undefined;
      });
    }
    return kept.digest;
  };
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewaySimpleAuthorizerResult> => {
    const sent = event.headers?.[FRONT_DOOR_HEADER];
    if (!sent) return { isAuthorized: false };
    const offered = digest(sent);
    if (timingSafeEqual(offered, await secretDigest(false))) return { isAuthorized: true };
    const stale = kept !== undefined && now() - kept.at >= FRONT_DOOR_CACHE_SECONDS * 1000;
    if (!stale) return { isAuthorized: false };
    return { isAuthorized: timingSafeEqual(offered, await secretDigest(true)) };
  };
}

import { hashToken, looksLikeToken } from '../api-keys/model.js';
import { KeyRateLimiter } from '../api-keys/rate-limit.js';
import { acceptMime } from '../emails/accept-send.js';
import { ApiError } from '../shared/errors.js';
import type { RelayDeps } from '../smtp-relay/relay.js';
import { singleSendDeps } from './send-email.js';

/**
 * The SMTP relay's dependencies (functions/smtp-relay/), built from the environment as send-email's
 * are (its settings are SMTP_RELAY_SPEC's: send-email's and its own): every accepted message is a
 * send, through acceptMime with POST /v1/emails' repositories, queue, content store and sender
 * check; the key looked up by its hash without a count, then one count of its rate per message on
 * the same rate shards as its API requests; request-log lines to the API's sink.
 */
export function smtpRelayDeps(): RelayDeps {
  const deps = singleSendDeps();
  const limiter = new KeyRateLimiter(deps.apiKeys, deps.rateLimit.perSecond);
  return {
    accept: (request) => acceptMime(deps, request),
    findKey: async (token) => (looksLikeToken(token) ? deps.apiKeys.findByHash(hashToken(token)) : null),
    async admit(key, nowMs) {
      const admitted = await limiter.admit(key.hash, nowMs);
      // Revoked since the session's AUTH: refused as a bad key.
      if (admitted.key === null) throw new ApiError(401, 'invalid_api_key', 'API key is invalid.');
      return admitted.state;
    },
    assertSenderDomain: deps.assertSenderDomain,
    requestLog: deps.requestLog,
    requestLogBodies: deps.requestLogBodies,
    log: deps.log,
    clock: deps.clock,
    counters: deps.counters,
  };
}

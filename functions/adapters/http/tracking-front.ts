import { request } from 'node:https';
import type { TrackingFront } from '../../domains/ports.js';
import type { TargetPolicy } from '../../shared/targets.js';
import { guardedLookup, type Resolve, systemResolve } from './guarded-lookup.js';

/** The longest one look at a tracking host takes: connection, TLS and the answer's head. */
export const FRONT_CHECK_TIMEOUT_MS = 3_000;

/** What Node's TLS errors mean for a reader of the domain. */
const TLS_REASONS: Record<string, string> = {
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is not valid for this name',
  CERT_HAS_EXPIRED: 'its certificate has expired',
  CERT_NOT_YET_VALID: 'its certificate is not valid yet',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate is signed by an authority that is not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate is signed by an authority that is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate cannot be verified',
  ECONNREFUSED: 'nothing answers on its HTTPS port',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'it does not resolve',
};

export interface HttpsTrackingFrontOptions {
  /** How names are resolved (the system's resolver on AWS). */
  resolve?: Resolve;
  /** The port looked at: 443 on AWS (a tracked link is https://host/…). */
  port?: number;
  /** Trusted authorities in place of Node's own (local development only: the local front's CA). */
  ca?: string;
  timeoutMs?: number;
}

/**
 * Whether a tracking host is served as SES will write it (`https://<host>/…`, docs/tracking.md):
 * a HEAD over TLS to port 443 with the host as SNI, the certificate checked as a browser would
 * (Node's CA store, the host name against the certificate's names). Any HTTP answer will do (SES
 * answers an unknown path with an error page): what matters is that the front holds the host's
 * certificate. A call on a user's behalf, so it connects only where webhooks may (no private,
 * loopback, link-local or metadata address: shared/targets.ts), checked at connection time.
 */
export class HttpsTrackingFront implements TrackingFront {
  private readonly port: number;
  private readonly timeoutMs: number;
  private readonly lookup;

  constructor(
    policy: TargetPolicy,
    private readonly options: HttpsTrackingFrontOptions = {},
  ) {
    this.port = options.port ?? 443;
    this.timeoutMs = options.timeoutMs ?? FRONT_CHECK_TIMEOUT_MS;
    this.lookup = guardedLookup(policy, options.resolve ?? systemResolve);
  }

  problem(host: string): Promise<string | undefined> {
    const why = (reason: string) => `${host} does not answer over HTTPS: ${reason}`;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (problem: string | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(problem);
      };
      const req = request(
        {
          host,
          port: this.port,
          path: '/',
          method: 'HEAD',
          servername: host,
          lookup: this.lookup,
          agent: false,
          ...(this.options.ca ? { ca: this.options.ca } : {}),
          headers: { 'user-agent': 'email-service tracking host check' },
        },
        (res) => {
          res.resume();
          finish(undefined);
        },
      );
      const timer = setTimeout(
        () => finish(why(`no answer within ${this.timeoutMs / 1000} s`)),
        this.timeoutMs,
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        const code = error.code ?? '';
        if (code === 'EADDRNOTALLOWED') finish(`${host} is refused: ${error.message}`);
        else
          finish(
            why(
              TLS_REASONS[code] ? `${TLS_REASONS[code]} (${code})` : `${code || 'error'}: ${error.message}`,
            ),
          );
      });
      req.end();
    });
  }
}

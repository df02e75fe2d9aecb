import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { EndpointGuard, PostResult, WebhookSender } from '../../core/ports.js';
import { addressProblem, hostOf, type TargetPolicy, urlProblem } from '../../core/targets.js';
import { ATTEMPT_TIMEOUT_MS, MAX_RESPONSE_KEPT } from '../../core/webhooks.js';

export type Resolve = (host: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * HTTP to webhook endpoints, guarded: the URL is checked (urlProblem), and the addresses its name
 * resolves to are checked at connection time, inside the socket's own lookup, so the address
 * connected to is the address checked (a name that resolves to a public address when the endpoint
 * is saved and to 10.0.0.1 later, DNS rebinding, is refused then). Redirects are not followed (a
 * 3xx is a failed attempt); the whole attempt, connection and TLS included, has ATTEMPT_TIMEOUT_MS.
 */
export class GuardedHttp implements WebhookSender, EndpointGuard {
  private readonly resolve: Resolve;
  private readonly timeoutMs: number;

  constructor(
    private readonly policy: TargetPolicy,
    options: { resolve?: Resolve; timeoutMs?: number } = {},
  ) {
    this.resolve = options.resolve ?? systemResolve;
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  }

  /** Every address the host resolves to, or why it may not be used. */
  private async addresses(host: string): Promise<LookupAddress[] | string> {
    let found: LookupAddress[];
    try {
      found = await this.resolve(host);
    } catch (error) {
      return `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
    }
    if (!found.length) return `${host} does not resolve`;
    for (const { address } of found) {
      const problem = addressProblem(address, this.policy);
      if (problem) return `${host} resolves to ${problem}`;
    }
    return found;
  }

  async check(endpoint: string): Promise<string | undefined> {
    const problem = urlProblem(endpoint, this.policy);
    if (problem) return problem;
    const found = await this.addresses(hostOf(new URL(endpoint)));
    return typeof found === 'string' ? found : undefined;
  }

  async post(endpoint: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const problem = urlProblem(endpoint, this.policy);
    if (problem) return { status: 0, durationMs: 0, response: `endpoint refused: ${problem}` };
    const url = new URL(endpoint);
    // The connection's own lookup: resolved and checked here, used as checked.
    const lookup: LookupFunction = (hostname, options, callback) => {
      this.addresses(hostname).then(
        (found) => {
          if (typeof found === 'string') {
            const error: NodeJS.ErrnoException = new Error(found);
            error.code = 'EADDRNOTALLOWED';
            callback(error, '', 0);
          } else if (options.all) callback(null, found);
          else callback(null, found[0]?.address ?? '', found[0]?.family ?? 4);
        },
        (error) => callback(error as NodeJS.ErrnoException, '', 0),
      );
    };
    const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (status: number, response: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, durationMs: performance.now() - started, response });
      };
      const req = request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup,
          agent: false,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (chunk: Buffer) => {
            if (kept < MAX_RESPONSE_KEPT) {
              chunks.push(chunk);
              kept += chunk.length;
            }
            if (kept >= MAX_RESPONSE_KEPT) {
              finish(status, Buffer.concat(chunks).subarray(0, MAX_RESPONSE_KEPT).toString('utf8'));
              res.destroy();
            }
          });
          const done = () => {
            const text = Buffer.concat(chunks).subarray(0, MAX_RESPONSE_KEPT).toString('utf8');
            const location = res.headers.location;
            finish(
              status,
              status >= 300 && status < 400 && location ? `redirect to ${location} not followed` : text,
            );
          };
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        finish(0, `no answer within ${this.timeoutMs / 1000} s`);
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) =>
        finish(
          0,
          error.code === 'EADDRNOTALLOWED'
            ? `endpoint refused: ${error.message}`
            : `${error.code ?? 'error'}: ${error.message}`,
        ),
      );
      req.end(body);
    });
  }
}

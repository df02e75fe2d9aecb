import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { FetchError, type FileFetcher } from '../../shared/ports.js';
import { hostOf, type TargetPolicy, urlProblem } from '../../shared/targets.js';
import { ATTEMPT_TIMEOUT_MS, MAX_RESPONSE_KEPT } from '../../webhooks/model.js';
import type { EndpointGuard, PostResult, WebhookSender } from '../../webhooks/ports.js';
import { checkedAddresses, guardedLookup, type Resolve, systemResolve } from './guarded-lookup.js';

export type { Resolve } from './guarded-lookup.js';

/**
 * HTTP on users' behalf (webhook endpoints, attachments fetched from their `path`), guarded: the URL is checked (urlProblem), and the addresses its name
 * resolves to are checked at connection time, inside the socket's own lookup, so the address
 * connected to is the address checked (a name that resolves to a public address when the endpoint
 * is saved and to 10.0.0.1 later, DNS rebinding, is refused then). Redirects are not followed (a
 * 3xx is a failed attempt); the whole attempt, connection and TLS included, has ATTEMPT_TIMEOUT_MS.
 */
/** The longest a file fetch (an attachment's `path`) may take, redirects included. */
export const FETCH_TIMEOUT_MS = 20_000;

export class GuardedHttp implements WebhookSender, EndpointGuard, FileFetcher {
  private readonly resolve: Resolve;
  private readonly timeoutMs: number;
  private readonly fetchTimeoutMs: number;
  /** The connection's own lookup: resolved and checked there, used as checked. */
  private readonly lookup: LookupFunction;

  constructor(
    private readonly policy: TargetPolicy,
    options: { resolve?: Resolve; timeoutMs?: number; fetchTimeoutMs?: number } = {},
  ) {
    this.resolve = options.resolve ?? systemResolve;
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.fetchTimeoutMs = options.fetchTimeoutMs ?? FETCH_TIMEOUT_MS;
    this.lookup = guardedLookup(policy, this.resolve);
  }

  async check(endpoint: string): Promise<string | undefined> {
    const problem = urlProblem(endpoint, this.policy);
    if (problem) return problem;
    const found = await checkedAddresses(hostOf(new URL(endpoint)), this.policy, this.resolve);
    return typeof found === 'string' ? found : undefined;
  }

  async post(endpoint: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const problem = urlProblem(endpoint, this.policy);
    if (problem) return { status: 0, durationMs: 0, response: `endpoint refused: ${problem}` };
    const url = new URL(endpoint);
    const lookup = this.lookup;
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

  /**
   * GETs a user's file (an attachment's `path`) with the same guard: each URL, redirects included
   * (at most MAX_REDIRECTS), is checked, and each connection's resolved address; the body is
   * counted while it streams and refused past `maxBytes`; the whole fetch has `fetchTimeoutMs`.
   * A 4xx other than 408 and 429 is final; anything else (5xx, timeouts, broken connections) may
   * pass, so it is temporary.
   */
  async fetch(url: string, maxBytes: number): Promise<Uint8Array> {
    const deadline = Date.now() + this.fetchTimeoutMs;
    let current = url;
    for (let redirects = 0; ; redirects++) {
      const problem = urlProblem(current, this.policy);
      if (problem) throw new FetchError(`${redactUrl(current)} ${problem}`, false);
      const answer = await this.getOnce(new URL(current), maxBytes, deadline);
      if ('location' in answer) {
        if (redirects >= MAX_REDIRECTS) throw new FetchError(`more than ${MAX_REDIRECTS} redirects`, false);
        current = new URL(answer.location, current).toString();
        continue;
      }
      return answer.bytes;
    }
  }

  private getOnce(
    url: URL,
    maxBytes: number,
    deadline: number,
  ): Promise<{ bytes: Uint8Array } | { location: string }> {
    const request = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (message: string, temporary: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(new FetchError(message, temporary));
      };
      const req = request(url, { method: 'GET', lookup: this.lookup, agent: false }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          settled = true;
          clearTimeout(timer);
          res.resume();
          resolve({ location: res.headers.location });
          return;
        }
        if (status < 200 || status >= 300) {
          res.resume();
          fail(`the server answered ${status}`, status >= 500 || status === 408 || status === 429);
          return;
        }
        const declared = Number(res.headers['content-length'] ?? Number.NaN);
        if (declared > maxBytes) {
          fail(`the file is ${declared} bytes, over the ${maxBytes} bytes left for it`, false);
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) fail(`the file is over the ${maxBytes} bytes left for it`, false);
          else chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ bytes: new Uint8Array(Buffer.concat(chunks)) });
        });
        res.on('error', (error) => fail(`the download broke off (${error.message})`, true));
      });
      const timer = setTimeout(
        () => fail(`no complete answer within ${this.fetchTimeoutMs / 1000} s`, true),
        Math.max(0, deadline - Date.now()),
      );
      req.on('error', (error: NodeJS.ErrnoException) =>
        error.code === 'EADDRNOTALLOWED'
          ? fail(`refused: ${error.message}`, false)
          : fail(`${error.code ?? 'error'}: ${error.message}`, true),
      );
      req.end();
    });
  }
}

/** A URL without its query string (which may carry a token) for errors and logs. */
export const redactUrl = (url: string) => url.replace(/[?#].*$/, '');

/** Redirects a file fetch follows, each checked like the first URL. */
export const MAX_REDIRECTS = 3;

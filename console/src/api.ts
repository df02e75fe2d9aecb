import { CONSOLE_RATE_LIMIT, CONSOLE_REQUEST_HEADER } from '../../functions/api-keys/console-budget.js';
import { session } from './session.js';

/** An answer of the API that is not a success, in words a person can act on. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly name: string,
    message: string,
    /** What to do about it. */
    readonly advice: string,
  ) {
    super(message);
  }
}

/** Called when the key is refused (401): the app signs out and asks for a key again. */
let onUnauthorized: () => void = () => {};
export const whenUnauthorized = (callback: () => void) => {
  onUnauthorized = callback;
};

function adviceFor(status: number, name: string, what: string): string {
  if (status === 401) return 'The key was refused: sign in again with a valid API key.';
  if (status === 403 && name === 'restricted_api_key')
    return `This key has sending access only: sign in with a full-access key to see ${what}.`;
  // A change the item's state does not allow (a broadcast already sent): Resend answers it 403 validation_error.
  if (status === 403 && name === 'validation_error')
    return 'It cannot be done in its present state: the message says why.';
  if (status === 403) return 'The service refused the request: check the key and how you reach the service.';
  if (status === 404) return 'It may have been deleted: go back to the list.';
  if (status === 429) return 'Too many requests with this key: wait a few seconds and try again.';
  if (status === 400 || status === 409 || status === 422)
    return 'Correct what the message names and try again.';
  if (status >= 500) return 'The service failed: try again in a moment.';
  return 'Try again.';
}

export interface Call {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  body?: unknown;
  /** What the request is about, for the message of a refusal ("emails", "domains"…). */
  what?: string;
  /** Send this key instead of the signed-in one (the sign-in check). */
  key?: string;
}

/**
 * The console's pace: at most CONSOLE_RATE_LIMIT requests start in any window of this length, for
 * the whole console (one queue, every page and every retry). A little over a second, so the
 * browser's own start times (a timer fires late, a fetch starts after it is called) never show
 * more than CONSOLE_RATE_LIMIT in one second, and the server's one-second windows never count more.
 */
export const PACE_WINDOW_MS = 1100;
/** A 429 is waited out (its Retry-After, for the whole queue) and asked again, for this long at most. */
const MOST_WAITED_MS = 60_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** When the latest requests started (performance.now()), oldest first: at most CONSOLE_RATE_LIMIT. */
const started: number[] = [];
/** Nothing starts before this (a 429's Retry-After). */
let pausedUntil = 0;
let queue: Promise<void> = Promise.resolve();

/** Resolves when this request may start: the queue's turn, the pace, and any Retry-After. */
function turn(): Promise<void> {
  const mine = queue.then(async () => {
    for (;;) {
      const now = performance.now();
      if (now < pausedUntil) {
        await sleep(pausedUntil - now);
        continue;
      }
      const oldest = started[0];
      if (started.length < CONSOLE_RATE_LIMIT || oldest === undefined || now - oldest >= PACE_WINDOW_MS) {
        started.push(now);
        if (started.length > CONSOLE_RATE_LIMIT) started.shift();
        return;
      }
      await sleep(oldest + PACE_WINDOW_MS - now);
    }
  });
  queue = mine;
  return mine;
}

/** Seconds of a Retry-After header (a number of seconds or an HTTP date), at least 1. */
function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  if (header && Number.isFinite(seconds)) return Math.max(1, seconds) * 1000;
  const date = header ? Date.parse(header) : Number.NaN;
  return Number.isFinite(date) ? Math.max(1000, date - Date.now()) : 1000;
}

/**
 * A call to the API, same origin, with the signed-in key as the bearer token, paced with every
 * other (PACE_WINDOW_MS) and marked as the console's (its own budget on the server). A 429 is
 * waited out for its Retry-After and asked again, up to MOST_WAITED_MS, not shown as an error.
 */
export async function api<T>(path: string, call: Call = {}): Promise<T> {
  const key = call.key ?? session.get();
  const headers: Record<string, string> = { accept: 'application/json', [CONSOLE_REQUEST_HEADER]: '1' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let waited = 0;
  for (;;) {
    await turn();
    try {
      response = await fetch(path, {
        method: call.method ?? 'GET',
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new ApiFailure(
        0,
        'network_error',
        'The service could not be reached.',
        'Check that it is running, then try again.',
      );
    }
    if (response.status !== 429 || waited >= MOST_WAITED_MS) break;
    const wait = retryAfterMs(response.headers.get('retry-after'));
    waited += wait;
    pausedUntil = Math.max(pausedUntil, performance.now() + wait);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (response.ok) return json as T;
  const error = (json ?? {}) as {
    name?: string;
    message?: string;
    errors?: { field?: string; message?: string }[];
  };
  const name = error.name ?? 'error';
  // A field's message the whole message already says (the service's "Invalid request: domain: …"
  // names every field) is not said twice.
  const details = error.errors
    ?.filter((e) => !e.message || !error.message?.includes(e.message))
    .map((e) => (e.field ? `${e.field}: ${e.message}` : e.message))
    .join('; ');
  const message = `${error.message ?? `The service answered ${response.status}.`}${details ? ` (${details})` : ''}`;
  const failure = new ApiFailure(
    response.status,
    name,
    message,
    adviceFor(response.status, name, call.what ?? 'this'),
  );
  if (response.status === 401 && call.key === undefined) onUnauthorized();
  throw failure;
}

/** A query string from the defined values. */
export const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

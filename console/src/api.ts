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

/** A call to the API, same origin, with the signed-in key as the bearer token. */
export async function api<T>(path: string, call: Call = {}): Promise<T> {
  const key = call.key ?? session.get();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
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
  // A field's message that only repeats the whole message is not said twice.
  const details = error.errors
    ?.filter((e) => e.message !== error.message)
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

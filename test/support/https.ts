import { Agent, fetch } from 'undici';

/** fetch over HTTPS that trusts the local service's self-signed certificate (and nothing else). */
export function httpsClient(baseUrl: string, certificate: string, apiKey?: string) {
  const dispatcher = new Agent({ connect: { ca: certificate } });
  const call = async (
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; key?: string | null } = {},
  ) => {
    const key = options.key === undefined ? apiKey : options.key;
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, dispatcher });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in the tests
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, json, text };
  };
  return { call, close: () => dispatcher.close() };
}

export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await probe();
  }
  return value;
}

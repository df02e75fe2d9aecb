import { parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * The local runtime's parts that run on threads of their own (the emulators, the consumers), so
 * that `npm start` uses more than one core: each part is started in a worker thread, which answers
 * a few calls (`idle`, `stop`, …) by message. Worker threads end with their process, so a killed
 * `npm start` leaves nothing running behind it.
 */

interface Call {
  id: number;
  method: string;
  arg: unknown;
}
type Reply = { id: number; result?: unknown; error?: SerializedError };
type Started = { started: unknown } | { failed: SerializedError };

interface SerializedError {
  message: string;
  stack?: string;
  code?: string;
  port?: number;
}

const serialize = (error: unknown): SerializedError => {
  const e = error as Error & { code?: string; port?: number };
  return {
    message: e?.message ?? String(error),
    ...(e?.stack ? { stack: e.stack } : {}),
    ...(e?.code ? { code: e.code } : {}),
    ...(e?.port !== undefined ? { port: e.port } : {}),
  };
};

const revive = (error: SerializedError): Error =>
  Object.assign(new Error(error.message), {
    ...(error.stack ? { stack: error.stack } : {}),
    ...(error.code ? { code: error.code } : {}),
    ...(error.port !== undefined ? { port: error.port } : {}),
  });

export interface PartThread<Started> {
  /** What the part said about itself once started (its endpoints, say). */
  started: Started;
  call<T>(method: string, arg?: unknown): Promise<T>;
  /** Calls `stop` on the part, then ends the thread. */
  stop(): Promise<void>;
}

/**
 * Starts a worker thread running `module` (a TypeScript file that calls `servePart`), with `data`,
 * and waits until the part has started (or failed to, with its error, code and port kept).
 */
export function startPartThread<S>(module: URL, data: unknown): Promise<PartThread<S>> {
  // The part is TypeScript: a small entry registers tsx in the thread, then imports it.
  const worker = new Worker(new URL('./thread-entry.mjs', import.meta.url), {
    workerData: { module: module.href, data },
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let exited = false;
  let running = false;
  let stopping = false;
  // A part that dies once running (an uncaught error in an emulator or a consumer) would leave the
  // service half alive, accepting emails nothing sends: the whole process ends instead, loudly, and
  // the next start recovers as after any crash.
  const died = (why: string) => {
    if (!running || stopping) return;
    console.error(`a local service thread (${module.pathname.split('/').pop()}) died: ${why}; stopping`);
    process.exit(1);
  };
  return new Promise((resolve, reject) => {
    worker.once('error', (error) => {
      for (const { reject: fail } of pending.values()) fail(error);
      pending.clear();
      reject(error);
      died(error.stack ?? String(error));
    });
    worker.once('exit', (code) => {
      exited = true;
      const error = new Error(`a local service thread exited (code ${code})`);
      for (const { reject: fail } of pending.values()) fail(error);
      pending.clear();
      reject(error);
      died(`exit code ${code}`);
    });
    worker.on('message', (message: Started | Reply) => {
      if ('started' in message) {
        const call = <T>(method: string, arg?: unknown) => {
          if (exited) return Promise.reject(new Error('the local service thread has ended'));
          const id = nextId++;
          return new Promise<T>((done, fail) => {
            pending.set(id, { resolve: done as (value: unknown) => void, reject: fail });
            worker.postMessage({ id, method, arg } satisfies Call);
          });
        };
        const part: PartThread<S> = {
          started: message.started as S,
          call,
          async stop() {
            stopping = true;
            if (exited) return;
            await call('stop').catch(() => undefined);
            await worker.terminate();
          },
        };
        running = true;
        resolve(part);
        return;
      }
      if ('failed' in message) {
        reject(revive(message.failed));
        void worker.terminate();
        return;
      }
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(revive(message.error));
      else waiting.resolve(message.result);
    });
  });
}

/** What the parent passed to a part's thread. */
export const partData = <T>(): T => (workerData as { data: T }).data;

/**
 * In a part's thread: starts it, tells the parent what it started (or why it failed), then answers
 * the parent's calls with `methods`.
 */
export async function servePart<P extends Record<string, (arg: never) => unknown>>(
  start: () => Promise<{ started: unknown; methods: P }>,
): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('servePart runs in a worker thread');
  let methods: P;
  try {
    const part = await start();
    methods = part.methods;
    port.postMessage({ started: part.started });
  } catch (error) {
    port.postMessage({ failed: serialize(error) });
    return;
  }
  port.on('message', async ({ id, method, arg }: Call) => {
    try {
      const handler = methods[method];
      if (!handler) throw new Error(`no method ${method} in this thread`);
      port.postMessage({ id, result: await handler(arg as never) } satisfies Reply);
    } catch (error) {
      port.postMessage({ id, error: serialize(error) } satisfies Reply);
    }
  });
}

import { type ChildProcess, spawn } from 'node:child_process';

export interface NpmStart {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  baseUrl: string;
  apiKey: string;
  viewer: string;
  exited: Promise<number | null>;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs `npm start` (bin/local.ts) and waits until it printed its banner, or exited. One process,
 * with tsx as Node's loader (what the tsx command does in a child process), so that a SIGKILL
 * reaches the service itself. For the e2e tests and the chaos and load harnesses.
 */
export async function startNpmStart(env: Record<string, string>, args: string[] = []): Promise<NpmStart> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Ctrl+C') && child.exitCode === null) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm start printed no banner within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const field = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)?.[1] ?? '';
  return {
    child,
    output: () => output,
    baseUrl: field('Base URL'),
    apiKey: field('API key'),
    viewer: field('Sent mail'),
    exited,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface NpmStart {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  baseUrl: string;
  apiKey: string;
  viewer: string;
  /** The inbound SMTP endpoint it printed (`smtp://127.0.0.1:<port>`). */
  inboundSmtp: string;
  exited: Promise<number | null>;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs `npm start` (bin/local.ts) and waits until it printed its banner, or exited. One process,
 * with tsx as Node's loader (what the tsx command does in a child process), so that a SIGKILL
 * reaches the service itself. For the e2e tests and the chaos and load harnesses.
 */
export async function startNpmStart(
  env: Record<string, string>,
  args: string[] = [],
  options: { stdin?: boolean } = {},
): Promise<NpmStart> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    // A pipe to write to (its Enter), or none.
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
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
    inboundSmtp: field('Inbound SMTP'),
    exited,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * `npm start` in a fresh data folder, and a user's program under test/e2e/sdk/ run against it in
 * its own process, as a user's program runs: RESEND_BASE_URL points the SDK at the service,
 * NODE_EXTRA_CA_CERTS trusts the local certificate, SES_STORE_URL is the local SES's store,
 * INBOUND_SMTP_URL its inbound SMTP endpoint. What
 * the program printed last (one JSON line) is returned; `stop` ends the service and removes the data.
 */
export async function runSdkProgram(program: string, timeoutMs = 90_000) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sdk-'));
  const service = await startNpmStart({
    LOCAL_DATA_DIR: dataDir,
    PORT: '0',
    VIEWER_PORT: '0',
    INBOUND_SMTP_PORT: '0',
    RATE_LIMIT_PER_SECOND: '1000',
  });
  const stop = async () => {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', program], {
      env: {
        ...process.env,
        RESEND_BASE_URL: service.baseUrl,
        RESEND_API_KEY: service.apiKey,
        SES_STORE_URL: `${service.viewer}/store`,
        INBOUND_SMTP_URL: service.inboundSmtp,
        NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'localhost-cert.pem'),
      },
      timeout: timeoutMs,
    });
    // biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
    const seen = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<string, any>;
    return { service, seen, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

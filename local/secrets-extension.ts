import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { rotateKeySet } from '../functions/unsubscribe/keys.js';

/**
 * The local twin of the AWS Parameters and Secrets Lambda Extension (the layer the stack adds to
 * the functions that read a secret): an HTTP server on a loopback port answering
 * `GET /secretsmanager/get?secretId=…` as the extension does (GetSecretValue's answer as JSON),
 * only to a request carrying the session token in `X-Aws-Parameters-Secrets-Token`, 400 for a
 * secret it does not hold. The functions read it through the same adapter as on AWS
 * (adapters/secrets-manager/extension.ts), given PARAMETERS_SECRETS_EXTENSION_HTTP_PORT and
 * AWS_SESSION_TOKEN. Secrets are kept in memory; `put` changes one (a rotation).
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/retrieving-secrets_lambda.html
 */
export interface SecretsExtensionTwin {
  readonly port: number;
  readonly sessionToken: string;
  /** Every request it answered (its path and query). */
  readonly requests: string[];
  put(secretId: string, value: string): void;
  get(secretId: string): string | undefined;
  stop(): Promise<void>;
}

export async function startSecretsExtension(
  options: { sessionToken?: string; secrets?: Record<string, string>; port?: number } = {},
): Promise<SecretsExtensionTwin> {
  const sessionToken = options.sessionToken ?? randomBytes(16).toString('hex');
  const secrets = new Map(Object.entries(options.secrets ?? {}));
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.headers['x-aws-parameters-secrets-token'] !== sessionToken) {
      response.writeHead(401).end('missing or wrong X-Aws-Parameters-Secrets-Token');
      return;
    }
    const secretId = url.searchParams.get('secretId') ?? '';
    const value = secrets.get(secretId);
    if (request.method !== 'GET' || url.pathname !== '/secretsmanager/get' || value === undefined) {
      response.writeHead(400).end('no such secret');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        ARN: secretId,
        Name: secretId.split(':').pop(),
        SecretString: value,
        VersionId: 'local',
        VersionStages: ['AWSCURRENT'],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    sessionToken,
    requests,
    put: (secretId, value) => secrets.set(secretId, value),
    get: (secretId) => secrets.get(secretId),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The local unsubscribe keys' secret: one key, made now (as a first rotation makes it). */
export const localUnsubscribeKeys = (now = new Date()): string =>
  JSON.stringify(rotateKeySet(undefined, now, (n) => randomBytes(n)));

/** The unsubscribe keys' secret's name locally (the stack's is an ARN). */
export const LOCAL_UNSUBSCRIBE_KEYS_SECRET = 'email-service-unsubscribe-keys';

/**
 * npm start's unsubscribe keys: the twin holding them (its stop first among `stops`), and the
 * settings the functions read them with. Kept in the data folder when there is one, so links sent before a restart still open.
 */
export async function startLocalUnsubscribeKeys(dataDir: string | null, stops: (() => Promise<void>)[]) {
  const file = dataDir ? join(dataDir, 'unsubscribe-keys.json') : undefined;
  const keys = file && existsSync(file) ? readFileSync(file, 'utf8') : localUnsubscribeKeys();
  if (file) writeFileSync(file, keys, { mode: 0o600 });
  const twin = await startSecretsExtension({ secrets: { [LOCAL_UNSUBSCRIBE_KEYS_SECRET]: keys } });
  stops.unshift(() => twin.stop());
  return {
    settings: {
      UNSUBSCRIBE_KEYS_SECRET: LOCAL_UNSUBSCRIBE_KEYS_SECRET,
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(twin.port),
      // What the extension checks a request by (Lambda sets it); the emulators ignore it.
      AWS_SESSION_TOKEN: twin.sessionToken,
    },
  };
}

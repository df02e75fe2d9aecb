import { createHash, createHmac } from 'node:crypto';

/**
 * Secrets Manager's GetSecretValue and PutSecretValue over its JSON API, signed with Signature
 * Version 4 by hand (node:crypto), for the one function that rotates a secret: the project ships no
 * Secrets Manager client, and a reader never calls this (it reads through the secrets extension).
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface SecretsApiOptions {
  readonly region: string;
  /** @default the credentials Lambda gives a function (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) */
  readonly credentials?: AwsCredentials;
  /** @default https://secretsmanager.<region>.amazonaws.com */
  readonly endpoint?: string;
  readonly now?: () => Date;
}

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** The SigV4 headers of a POST of `body` to `url` (its path `/`, no query). */
export function signedHeaders(
  url: URL,
  target: string,
  body: string,
  options: { region: string; service: string; credentials: AwsCredentials; now: Date },
): Record<string, string> {
  const amzDate = options.now.toISOString().replace(/[-:]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    'content-type': 'application/x-amz-json-1.1',
    host: url.host,
    // The SDK's signer signs the payload's hash as a header too; so do we.
    'x-amz-content-sha256': sha256(body),
    'x-amz-date': amzDate,
    'x-amz-target': target,
    ...(options.credentials.sessionToken ? { 'x-amz-security-token': options.credentials.sessionToken } : {}),
  };
  const names = Object.keys(headers).sort();
  const canonical = [
    'POST',
    url.pathname || '/',
    '',
    ...names.map((name) => `${name}:${headers[name]}`),
    '',
    names.join(';'),
    sha256(body),
  ].join('\n');
  const scope = `${day}/${options.region}/${options.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = ['aws4_request'].reduce(
    (k, part) => hmac(k, part),
    [day, options.region, options.service].reduce<Buffer | string>(
      (k, part) => hmac(k, part),
      `AWS4${options.credentials.secretAccessKey}`,
    ),
  );
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${options.credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
}

export class SecretsApi {
  private readonly url: URL;

  constructor(private readonly options: SecretsApiOptions) {
    this.url = new URL(options.endpoint ?? `https://secretsmanager.${options.region}.amazonaws.com/`);
  }

  private async call<T>(action: string, input: Record<string, unknown>): Promise<T> {
    const credentials = this.options.credentials ?? {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
      ...(process.env.AWS_SESSION_TOKEN ? { sessionToken: process.env.AWS_SESSION_TOKEN } : {}),
    };
    const body = JSON.stringify(input);
    const response = await fetch(this.url, {
      method: 'POST',
      headers: signedHeaders(this.url, `secretsmanager.${action}`, body, {
        region: this.options.region,
        service: 'secretsmanager',
        credentials,
        now: this.options.now?.() ?? new Date(),
      }),
      body,
      signal: AbortSignal.timeout(5_000),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`Secrets Manager ${action} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  async getSecretValue(secretId: string): Promise<string> {
    const { SecretString } = await this.call<{ SecretString?: string }>('GetSecretValue', {
      SecretId: secretId,
    });
    if (typeof SecretString !== 'string') throw new Error(`${secretId} has no SecretString`);
    return SecretString;
  }

  /** A new AWSCURRENT version; `token` makes a retried call the same version (its ClientRequestToken). */
  async putSecretValue(secretId: string, value: string, token: string): Promise<void> {
    await this.call('PutSecretValue', { SecretId: secretId, SecretString: value, ClientRequestToken: token });
  }
}

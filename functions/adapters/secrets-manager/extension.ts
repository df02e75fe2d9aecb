/**
 * A secret's value through the AWS Parameters and Secrets Lambda Extension (a layer the stack adds
 * to the function): an HTTP GET on the extension's port on localhost, authenticated with the
 * function's session token, which the extension answers with Secrets Manager's GetSecretValue
 * answer, calling it with the function's own role and caching it (300 s by default). No SDK client
 * in the bundle. https://docs.aws.amazon.com/lambda/latest/dg/with-secrets-manager.html
 */
export interface ExtensionSecretOptions {
  /** The secret's ARN (or name). */
  readonly secretId: string;
  /** @default PARAMETERS_SECRETS_EXTENSION_HTTP_PORT, else 2773 (the extension's default) */
  readonly port?: number;
  /** @default AWS_SESSION_TOKEN (Lambda sets it; the extension refuses a request without it) */
  readonly sessionToken?: string;
  /** @default 3000 */
  readonly timeoutMs?: number;
}

export function extensionSecret(options: ExtensionSecretOptions): () => Promise<string> {
  const port = options.port ?? Number(process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? 2773);
  const url = `http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(options.secretId)}`;
  return async () => {
    const token = options.sessionToken ?? process.env.AWS_SESSION_TOKEN;
    if (!token) throw new Error('No AWS_SESSION_TOKEN: the secrets extension cannot be asked');
    const response = await fetch(url, {
      headers: { 'X-Aws-Parameters-Secrets-Token': token },
      signal: AbortSignal.timeout(options.timeoutMs ?? 3_000),
    });
    if (!response.ok)
      throw new Error(`The secrets extension answered ${response.status} for the front door's secret`);
    const { SecretString } = (await response.json()) as { SecretString?: unknown };
    if (typeof SecretString !== 'string' || SecretString.length === 0)
      throw new Error("The front door's secret has no SecretString");
    return SecretString;
  };
}

/**
 * Bundled IN PLACE OF `@aws-sdk/credential-provider-node` (an esbuild alias, lib/bundling.ts): the
 * SDK's default credential chain, cut to the links that can answer on Lambda.
 *
 * Lambda gives a function its role's credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN, which the full chain reads first (`fromEnv`). Where credentials are served
 * from a container endpoint instead (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, as
 * SnapStart does for the runtimes it supports), they are read from it, as the chain's last link
 * would. The links in between (SSO, ~/.aws files with STS role assumption, credential_process, web
 * identity tokens, the EC2 instance metadata service: 100+ KB with their clients) find nothing on
 * Lambda. AWS_PROFILE, which would make the full chain skip the environment, is not read: Lambda
 * has no profiles.
 *
 * The same exports as the package (test/unit/bundling.test.ts holds them to it) and the same
 * contract: `defaultProvider(init)` returns a provider of credentials, memoized, renewed when they
 * expire within 5 minutes (container credentials do; Lambda's variables carry no expiry); with no
 * credentials to read, a CredentialsProviderError. Only the deployed bundles use it: tests and the
 * local runtime run the full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { CredentialsProviderError } from '@smithy/core/config';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

type Init = NonNullable<Parameters<typeof fromEnv>[0]> & Record<string, unknown>;
type Options = Parameters<AwsCredentialIdentityProvider>[0];

/** As in @aws-sdk/credential-provider-node. */
export const credentialsWillNeedRefresh = (credentials?: AwsCredentialIdentity): boolean =>
  credentials?.expiration !== undefined;
/** As in @aws-sdk/credential-provider-node: expiring within 5 minutes counts as expired. */
export const credentialsTreatedAsExpired = (credentials?: AwsCredentialIdentity): boolean =>
  credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300_000;

async function read(init: Init, options: Options): Promise<AwsCredentialIdentity> {
  const env = process.env;
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) return fromEnv(init)();
  if (env.AWS_CONTAINER_CREDENTIALS_FULL_URI || env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) {
    // Loaded only where credentials come from an endpoint: on Lambda they are in the variables.
    const { fromHttp } = await import('@aws-sdk/credential-provider-http');
    return fromHttp(init)(options);
  }
  throw new CredentialsProviderError(
    'No AWS credentials: these bundles read them from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a ' +
      "container credentials endpoint, as Lambda provides them; the rest of the SDK's default chain is left " +
      'out (lib/bundling.ts).',
    { logger: init.logger, tryNextLink: false },
  );
}

export const defaultProvider = (init: Init = {}): AwsCredentialIdentityProvider => {
  let held: AwsCredentialIdentity | undefined;
  let pending: Promise<AwsCredentialIdentity> | undefined;
  const renew = (options: Options) =>
    (pending ??= read(init, options)
      .then((fresh) => {
        held = fresh;
        return fresh;
      })
      .finally(() => {
        pending = undefined;
      }));
  return async (options) => {
    const current = held;
    if (
      options?.forceRefresh ||
      !current ||
      (current.expiration && current.expiration.getTime() <= Date.now())
    )
      return renew(options);
    // About to expire but still valid: renewed now, and kept if renewing fails (as the full chain does).
    if (credentialsTreatedAsExpired(current)) return renew(options).catch(() => current);
    return current;
  };
};

import { Duration, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ConceptStacks } from './concept-stacks.js';
import type { ServiceFunction, ServiceResources } from './service-function.js';

export interface UnsubscribeKeysProps {
  readonly functions: ConceptStacks;
  readonly resources: ServiceResources;
  /** How often a new key is made. @default 30 days */
  readonly rotateEvery?: Duration;
}

/**
 * The unsubscribe links' signing keys (functions/unsubscribe/keys.ts): a Secrets Manager secret,
 * made with a generated `seed` (the first key), and rotate-unsubscribe-keys, run every 30 days,
 * adding a key and dropping those past their links' lifetime. A function whose catalog entry reads
 * the keys (`unsubscribeKeys: 'read'`) is given the secret as a resource (ServiceFunction.bind):
 * GetSecretValue on it only, its ARN in UNSUBSCRIBE_KEYS_SECRET and the AWS Parameters and Secrets
 * Lambda Extension, which reads it with the function's role and keeps it 300 s, so the value is
 * never in an environment. The rotation gets GetSecretValue and PutSecretValue on it. Defaults: rotation every 30 days; the secret encrypted
 * with the account's aws/secretsmanager key.
 */
export class UnsubscribeKeys extends Construct {
  public readonly secret: Secret;
  public readonly rotation: ServiceFunction;

  constructor(scope: Construct, id: string, props: UnsubscribeKeysProps) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description: "The unsubscribe links' signing keys ({keys:[{id, secret, created_at}]}, rotated monthly)",
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ keys: [] }),
        generateStringKey: 'seed',
        passwordLength: 64,
        excludePunctuation: true,
      },
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "Rotated by rotate-unsubscribe-keys on a schedule (it must keep the older keys listed so old links work, which Secrets Manager's rotation steps would not).",
    });
    this.rotation = props.functions.add('rotate-unsubscribe-keys', { timeout: Duration.seconds(30) });
    this.rotation.bind({ ...props.resources, unsubscribeKeys: this.secret });
    this.rotation.runEvery(
      props.rotateEvery ?? Duration.days(30),
      "Rotates the unsubscribe links' signing keys",
    );
  }
}

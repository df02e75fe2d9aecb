/**
 * The unsubscribe links' keys on AWS (issue 40, item 7): one Secrets Manager secret, read at run
 * time through the secrets extension by exactly the functions that declare `unsubscribeKeys`
 * (GetSecretValue on that secret only, its ARN in UNSUBSCRIBE_KEYS_SECRET, never its value), and
 * rotated monthly by a function that alone may PutSecretValue; the token routes throttled on
 * their own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName } from '../../functions/catalog.js';
import { TOKEN_ROUTE_THROTTLE } from '../../lib/constructs/email-api.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { logicalId, policiesOf, resourcesOf, synthStack } from '../support/template.js';

let stack: EmailServiceStack;
let template: ReturnType<typeof synthStack>['template'];
let secretId: string;
beforeAll(() => {
  ({ stack, template } = synthStack());
  secretId = logicalId(stack, stack.unsubscribeKeys.secret);
});

const secretStatements = (name: string) =>
  policiesOf(stack, template, name).filter((s) =>
    [s.Action].flat().some((action) => action.startsWith('secretsmanager:')),
  );
const functionResource = (name: string) => {
  const fn = stack.functions[name];
  if (!fn) throw new Error(`no function ${name}`);
  const id = logicalId(stack, fn as never);
  return resourcesOf(template, 'AWS::Lambda::Function')[id] as { Properties: Record<string, any> };
};

describe("the unsubscribe links' keys", () => {
  it('are one secret with a generated seed, never a value in the template', () => {
    const secrets = resourcesOf(template, 'AWS::SecretsManager::Secret');
    expect(secrets[secretId]?.Properties).toMatchObject({
      GenerateSecretString: {
        GenerateStringKey: 'seed',
        SecretStringTemplate: '{"keys":[]}',
        PasswordLength: 64,
      },
    });
    expect(secrets[secretId]?.Properties.SecretString).toBeUndefined();
  });

  it('grant exactly GetSecretValue on that secret to the functions that read them, PutSecretValue only to the rotation', () => {
    const readers = (Object.keys(FUNCTIONS) as FunctionName[]).filter(
      (name) => FUNCTIONS[name].unsubscribeKeys,
    );
    expect(readers.sort()).toEqual([
      // Each broadcast email's link: in its body (the fan-out) and its List-Unsubscribe (the lane).
      'fan-out-broadcast',
      'process-broadcast-queue',
      'process-send-queue',
      'rotate-unsubscribe-keys',
      'unsubscribe',
      'unsubscribe-page',
    ]);
    for (const name of Object.keys(stack.functions)) {
      const expected =
        name === 'rotate-unsubscribe-keys'
          ? [
              {
                Action: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'],
                Resource: { Ref: secretId },
              },
            ]
          : FUNCTIONS[name as FunctionName]?.unsubscribeKeys === 'read'
            ? [{ Action: 'secretsmanager:GetSecretValue', Resource: { Ref: secretId } }]
            : [];
      expect(
        secretStatements(name).map(({ Action, Resource }) => ({ Action, Resource })),
        name,
      ).toEqual(expected);
    }
  });

  it("give the readers the secret's ARN and the secrets extension, never its value", () => {
    for (const name of ['unsubscribe', 'unsubscribe-page']) {
      const { Properties } = functionResource(name);
      expect(Properties.Environment.Variables.UNSUBSCRIBE_KEYS_SECRET).toEqual({ Ref: secretId });
      expect(Properties.Environment.Variables.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT).toBe('2773');
      expect(JSON.stringify(Properties.Layers)).toMatch(/AWS-Parameters-and-Secrets-Lambda-Extension/);
      expect(JSON.stringify(Properties.Environment)).not.toMatch(/SecretString|seed/);
    }
  });

  it('are rotated every 30 days', () => {
    const rules = Object.values(resourcesOf(template, 'AWS::Events::Rule')).filter(
      (rule) => rule.Properties.ScheduleExpression === 'rate(30 days)',
    );
    expect(rules).toHaveLength(1);
  });

  it('serve the token routes under a throttle of their own', () => {
    const stage = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Stage'))[0];
    const settings = stage?.Properties.RouteSettings as Record<string, unknown>;
    for (const key of ['GET /unsubscribe/{token}', 'POST /unsubscribe/{token}', 'GET /share/{token}'])
      expect(settings[key], key).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 500 });
    expect(TOKEN_ROUTE_THROTTLE).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 500 });
  });
});

/**
 * Each function's environment, as synthesized, is exactly what its wiring reads: the stack sets no
 * variable its code ignores and leaves none unset that its code reads (none left to a default that
 * only holds locally). The wiring entry is the one its handler module calls, found in its source,
 * and run with the synthesized variables while every configuration read is recorded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName, specOf } from '../../functions/catalog.js';
import { CONFIG_KEYS } from '../../functions/shared/config.js';
import * as wiring from '../../functions/wiring.js';

// wiring.ts, and the modules of the functions that load some of their code on first use.
const WIRING = new Map<string, unknown>(
  [
    wiring,
    // Every module of functions/wiring/.
    ...(await Promise.all(
      readdirSync(new URL('../../functions/wiring/', import.meta.url))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => import(`../../functions/wiring/${file.replace(/\.ts$/, '.js')}`)),
    )),
  ].flatMap((module) => Object.entries(module)),
);

import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { logicalId, synthStack } from '../support/template.js';

type Variables = Record<string, unknown>;

/** The Parameters and Secrets extension's own variables (aws-lambda ParamsAndSecretsLayerVersion). */
const EXTENSION_VARIABLES = [
  'SECRETS_MANAGER_TIMEOUT_MILLIS',
  'SECRETS_MANAGER_TTL',
  'SSM_PARAMETER_STORE_TIMEOUT_MILLIS',
  'SSM_PARAMETER_STORE_TTL',
];
let stack: EmailServiceStack;
let resources: Record<string, { Properties: { Environment?: { Variables: Variables } } }>;

beforeAll(() => {
  const synth = synthStack();
  stack = synth.stack;
  resources = synth.template.toJSON().Resources;
});

const originalEnv = process.env;
afterEach(() => {
  process.env = originalEnv;
});

/** A plausible value for a variable the template gives as a reference (resolved at deploy time). */
const deployedValue = (key: string, value: unknown): string =>
  typeof value === 'string'
    ? value
    : key === 'PUBLIC_ORIGIN'
      ? 'https://abcdef1234.execute-api.us-east-1.amazonaws.com'
      : key.endsWith('_URL')
        ? 'https://sqs.us-east-1.amazonaws.com/123456789012/queue'
        : `deployed-${key.toLowerCase()}`;

/** Runs `build` with exactly these variables, and returns the configuration keys it read. */
function readsOf(variables: Variables, build: () => unknown): Set<string> {
  const reads = new Set<string>();
  const env: Record<string, string> = { AWS_REGION: 'us-east-1' };
  for (const [key, value] of Object.entries(variables)) env[key] = deployedValue(key, value);
  process.env = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string' && (CONFIG_KEYS as string[]).includes(key)) reads.add(key);
      return Reflect.get(target, key);
    },
  });
  build();
  return reads;
}

/**
 * The wiring entry a handler module builds its dependencies with: `name(arg?)` in its source (with
 * the repositories it names, which read no variable).
 */
function wiringCallOf(handler: string): () => unknown {
  const source = readFileSync(new URL(`../../functions/handlers/${handler}.ts`, import.meta.url), 'utf8');
  const call = source.match(/makeHandler\(\s*(\w+)\((?:'([\w-]+)')?(?:\s*,[^)]*)?\)\s*,?\s*\)/);
  if (!call) throw new Error(`${handler}: no makeHandler(<wiring>(…)) call`);
  const [, entry, argument] = call as unknown as [string, string, string | undefined];
  const build = WIRING.get(entry) as ((name?: string) => unknown) | undefined;
  if (typeof build !== 'function')
    throw new Error(`${handler}: ${entry} is not exported by wiring.ts or functions/wiring/`);
  return () => build(argument);
}

/**
 * What a function's code builds on first use, beyond its wiring entry: the send consumer loads the
 * unsubscribe links (PUBLIC_ORIGIN, UNSUBSCRIBE_KEYS_SECRET) on its first email with a topic_id
 * (functions/wiring/send-gate.ts).
 */
const LOADED_LATER: Partial<Record<string, readonly string[]>> = {
  'process-send-queue': ['unsubscribeLinks'],
  // Every broadcast email has its own unsubscribe link.
  'process-broadcast-queue': ['unsubscribeLinks'],
};
function laterCallsOf(handler: string): (() => unknown)[] {
  return (LOADED_LATER[handler] ?? []).map((entry) => {
    const build = WIRING.get(entry);
    if (typeof build !== 'function')
      throw new Error(`${handler}: ${entry} is not exported by functions/wiring/`);
    return () => build();
  });
}

describe("each function's environment", () => {
  it('covers every handler in the catalog', () => {
    expect(Object.keys(stack.functions).sort()).toEqual(Object.keys(FUNCTIONS).sort());
  });

  for (const name of Object.keys(FUNCTIONS)) {
    it(`${name}: the synthesized variables are the ones its wiring reads`, () => {
      const fn = stack.functions[name];
      if (!fn) throw new Error(`no function ${name}`);
      const variables = resources[logicalId(stack, fn)]?.Properties.Environment?.Variables ?? {};
      // Powertools' own, and the secrets extension's layer's (a function that reads the unsubscribe keys):
      // CDK's paramsAndSecrets sets PARAMETERS_SECRETS_EXTENSION_*, and these four, for the layer to read.
      const configuration = Object.keys(variables).filter(
        (key) =>
          !key.startsWith('POWERTOOLS_') &&
          !key.startsWith('PARAMETERS_SECRETS_EXTENSION_') &&
          !EXTENSION_VARIABLES.includes(key),
      );
      const calls = [wiringCallOf(name), ...laterCallsOf(name)];
      const reads = readsOf(variables, () => {
        for (const call of calls) call();
      });
      // A variable that turns a feature on is read, and unset while the feature is off.
      const optional: readonly string[] = specOf(name as FunctionName).optionalEnv ?? [];
      const readAndSet = [...reads].filter((key) => !optional.includes(key) || key in variables);
      expect(readAndSet.sort()).toEqual(configuration.sort());
      // And nothing is read that the template leaves to a default.
      for (const key of readAndSet) expect(variables, key).toHaveProperty(key);
    });
  }

  it('sets the service name and metrics namespace Powertools reads, and the log level', () => {
    for (const fn of Object.values(stack.functions)) {
      const variables = resources[logicalId(stack, fn)]?.Properties.Environment?.Variables ?? {};
      expect(variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: stack.stackName,
        POWERTOOLS_METRICS_NAMESPACE: 'EmailService',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    }
  });
});

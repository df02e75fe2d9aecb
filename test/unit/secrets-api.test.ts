/**
 * The rotation's Secrets Manager calls are signed by hand (adapters/secrets-manager/secrets-api.ts):
 * the signature must be the one the AWS SDK's own signer makes for the same request.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { signedHeaders } from '../../functions/adapters/secrets-manager/secrets-api.js';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token',
};

/** Node's hash, in the shape the signer takes (a key: HMAC). */
class Sha256 {
  private readonly hash;
  constructor(key?: string | Uint8Array) {
    this.hash = key ? createHmac('sha256', key) : createHash('sha256');
  }
  update(data: string | Uint8Array) {
    this.hash.update(data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

describe('SigV4 for Secrets Manager', () => {
  it('signs a PutSecretValue as the SDK signer does', async () => {
    const url = new URL('https://secretsmanager.us-east-1.amazonaws.com/');
    const body = JSON.stringify({
      SecretId: 'arn:x',
      SecretString: '{"keys":[]}',
      ClientRequestToken: 't'.repeat(32),
    });
    const now = new Date('2026-11-28T12:34:56Z');
    const ours = signedHeaders(url, 'secretsmanager.PutSecretValue', body, {
      region: 'us-east-1',
      service: 'secretsmanager',
      credentials,
      now,
    });
    const sdk = await new SignatureV4({
      credentials,
      region: 'us-east-1',
      service: 'secretsmanager',
      sha256: Sha256 as never,
    }).sign(
      {
        query: {},
        method: 'POST',
        protocol: 'https:',
        hostname: url.hostname,
        path: '/',
        headers: {
          'content-type': 'application/x-amz-json-1.1',
          host: url.host,
          'x-amz-target': 'secretsmanager.PutSecretValue',
        },
        body,
      } as never,
      { signingDate: now },
    );
    expect(ours.authorization).toBe(
      String((sdk as unknown as { headers: Record<string, string> }).headers.authorization),
    );
  });
});

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/** Every local certificate's key and signature: an EC P-256 key, signed with SHA-256. */
const EC_P256 = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' } as const;

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where the certificate is on disk (for `curl --cacert`), when it is kept on disk. */
  certPath?: string;
}

/**
 * A self-signed certificate for localhost and 127.0.0.1. Kept under the data directory so it
 * stays the same across restarts (clients can trust it once); generated in memory otherwise.
 */
export async function localTls(dir?: string): Promise<TlsMaterial> {
  const keyPath = dir ? join(dir, 'localhost-key.pem') : undefined;
  const certPath = dir ? join(dir, 'localhost-cert.pem') : undefined;
  if (keyPath && certPath && existsSync(keyPath) && existsSync(certPath)) {
    return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
  }
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
    ...EC_P256,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  if (dir && keyPath && certPath) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(keyPath, pems.private, { mode: 0o600 });
    writeFileSync(certPath, pems.cert);
    return { key: pems.private, cert: pems.cert, certPath };
  }
  return { key: pems.private, cert: pems.cert };
}

/** A certificate authority of this machine's own, for the local HTTPS front of tracking hosts. */
export async function localCertificateAuthority(): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: 'email-service local tracking CA' }], {
    notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
    ...EC_P256,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * A server certificate for `name`, signed by `ca` (self-signed without one), valid from
 * `notBefore` to `notAfter` (now to 90 days on by default).
 */
export async function certificateFor(
  name: string,
  ca?: { key: string; cert: string },
  validity: { notBefore?: Date; notAfter?: Date } = {},
): Promise<{ key: string; cert: string }> {
  const notBefore = validity.notBefore ?? new Date(Date.now() - 60_000);
  const pems = await generate([{ name: 'commonName', value: name }], {
    notBeforeDate: notBefore,
    notAfterDate: validity.notAfter ?? new Date(notBefore.getTime() + 90 * 24 * 3600 * 1000),
    ...EC_P256,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: name }] },
    ],
    ...(ca ? { ca } : {}),
  });
  return { key: pems.private, cert: pems.cert };
}

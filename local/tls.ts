import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

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
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
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

import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { certificateFor, localCertificateAuthority } from './tls.js';

/**
 * The local twin of the HTTPS front for tracking hosts (the CloudFront distribution of
 * docs/tracking.md): an HTTPS listener on 127.0.0.1 that answers for any tracking host with a
 * certificate for its name, signed by a certificate authority of its own made at start, and
 * passes every request on to the local SES's tracking host, as CloudFront passes them to SES's.
 * Before a domain's tracking host goes into its configuration set, the domain functions look at it
 * here as they look at port 443 on AWS: TLS with the host as SNI, the certificate checked against
 * this CA (LOCAL_TRACKING_FRONT_CA) and the host's name.
 */
export interface LocalTrackingFront {
  /** `https://127.0.0.1:<port>` (LOCAL_TRACKING_FRONT). */
  url: string;
  /** The authority its certificates are signed by, PEM (LOCAL_TRACKING_FRONT_CA). */
  ca: string;
  stop(): Promise<void>;
}

export async function startLocalTrackingFront(options: { origin: string }): Promise<LocalTrackingFront> {
  const ca = await localCertificateAuthority();
  const contexts = new Map<string, Promise<SecureContext>>();
  const contextFor = (name: string) => {
    let context = contexts.get(name);
    if (!context) {
      context = certificateFor(name, ca).then((pems) => createSecureContext(pems));
      contexts.set(name, context);
    }
    return context;
  };
  const origin = new URL(options.origin);
  const fallback = await certificateFor('tracking.email-service.localhost', ca);
  const server: Server = createServer(
    {
      ...fallback,
      SNICallback: (name, callback) =>
        contextFor(name.toLowerCase()).then(
          (context) => callback(null, context),
          (error: Error) => callback(error),
        ),
    },
    (req, res) => {
      const forward = httpRequest(
        {
          host: origin.hostname,
          port: origin.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: origin.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('The local SES tracking host did not answer');
      });
      req.pipe(forward);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    ca: ca.cert,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

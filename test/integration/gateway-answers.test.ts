import { request } from 'node:https';
import { describe, expect, it } from 'vitest';
import { type GatewayAnswer, startHttpsGateway } from '../../local/https-gateway.js';
import { localTls } from '../../local/tls.js';

/** What npm start prints of each request comes from the gateway's answers: never a share link's token. */
describe("the local gateway's answer lines", () => {
  it('name a share link by its route, not its token', async () => {
    const answers: GatewayAnswer[] = [];
    const page = async () => ({ statusCode: 404, headers: { 'content-type': 'text/html' }, body: 'gone' });
    const gateway = await startHttpsGateway({
      tls: await localTls(),
      port: 0,
      handlers: { 'get-shared-email': page },
      fallback: page,
      onAnswer: (answer) => answers.push(answer),
    });
    try {
      const get = (path: string) =>
        new Promise<void>((resolve, reject) => {
          const req = request(
            { host: '127.0.0.1', port: gateway.port, path, rejectUnauthorized: false },
            (res) => {
              res.resume();
              res.on('end', resolve);
            },
          );
          req.on('error', reject);
          req.end();
        });
      const token = 'Zm9yZ2VkLXRva2VuLXRoYXQtaXMtbG9uZy1lbm91Z2gtdG8tbWF0dGVy';
      await get(`/share/${token}`);
      await get(`/share/${token}x?from=chat`);
      expect(answers.map((a) => a.path)).toEqual(['/share/{token}', '/share/{token}']);
      expect(JSON.stringify(answers)).not.toContain(token);
    } finally {
      await gateway.stop();
    }
  });
});

/** A form is binary to API Gateway's HTTP APIs: the local gateway hands it base64-encoded, its bytes unchanged. */
describe("the local gateway's request bodies", () => {
  it('hands a multipart form base64-encoded (a Latin-1 CSV arrives byte for byte), and JSON as text', async () => {
    const seen: { body?: string; isBase64Encoded?: boolean }[] = [];
    const handler = async (event: { body?: string; isBase64Encoded?: boolean }) => {
      seen.push({ body: event.body, isBase64Encoded: event.isBase64Encoded });
      return {
        statusCode: 201,
        headers: { 'content-type': 'application/json' },
        body: '{"object":"contact_import","id":"019abcd2-6f1e-7c3a-9b1d-2e4f6a8c0b12"}',
      };
    };
    const gateway = await startHttpsGateway({
      tls: await localTls(),
      port: 0,
      handlers: { 'create-contact-import': handler },
      fallback: handler,
    });
    try {
      const form = new FormData();
      form.append('file', new Blob([Buffer.from('email,name\nz@example.com,Zo\xeb\n', 'latin1')]), 'c.csv');
      const sent = new Request('https://x/', { method: 'POST', body: form });
      const bytes = Buffer.from(await sent.arrayBuffer());
      const post = (body: Buffer, type: string) =>
        new Promise<void>((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port: gateway.port,
              path: '/v1/contacts/imports',
              method: 'POST',
              headers: { 'content-type': type, authorization: 'Bearer x' },
              rejectUnauthorized: false,
            },
            (res) => {
              res.resume();
              res.on('end', resolve);
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      await post(bytes, sent.headers.get('content-type') ?? '');
      await post(Buffer.from('{"upload_id":"u"}'), 'application/json');
      expect(seen[0]?.isBase64Encoded).toBe(true);
      expect(Buffer.from(seen[0]?.body ?? '', 'base64').equals(bytes)).toBe(true);
      expect(seen[1]).toEqual({ body: '{"upload_id":"u"}', isBase64Encoded: false });
    } finally {
      await gateway.stop();
    }
  });
});

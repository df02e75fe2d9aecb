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

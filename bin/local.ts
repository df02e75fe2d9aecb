#!/usr/bin/env node
/**
 * `npm start`: the whole service on this machine over HTTPS, with embedded emulators.
 *   PORT=3000            HTTPS port of the API
 *   DEV_API_KEY=esk_...  accept this key instead of printing a new one
 *   LOCAL_DATA_DIR=...   where data survives restarts (default .local-data)
 *   --in-memory          keep nothing between runs
 */
import { jsonLogger } from '../functions/http/log.js';
import { startLocalService } from '../functions/local/service.js';

const inMemory = process.argv.includes('--in-memory') || process.env.LOCAL_IN_MEMORY === '1';
const port = process.env.PORT ? Number(process.env.PORT) : 3000;
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, got ${process.env.PORT}`);
  process.exit(1);
}

try {
  const service = await startLocalService({
    port,
    dataDir: inMemory ? null : (process.env.LOCAL_DATA_DIR ?? '.local-data'),
    apiKey: process.env.DEV_API_KEY || undefined,
    log: jsonLogger('warn'),
  });
  const cacert = service.certificatePath ? `--cacert ${service.certificatePath}` : '-k';
  console.log(`
  Email service running locally (HTTPS only)

  Base URL     ${service.baseUrl}
  API key      ${service.apiKey}   (full access${process.env.DEV_API_KEY ? ', from DEV_API_KEY' : '; shown once, a new one each start'})
  Sent mail    ${service.viewerUrl}   (what the local SES received)
  Data         ${inMemory ? 'in memory (gone when this stops)' : `${process.env.LOCAL_DATA_DIR ?? '.local-data'}/ (kept across restarts)`}
  TLS          self-signed for localhost; curl ${cacert} ...

  Try it: add a sending domain (locally it is verified by itself a few seconds later;
  a name under .invalid never is), then send from it:
    curl ${cacert} ${service.baseUrl}/domains \\
      -H 'Authorization: Bearer ${service.apiKey}' -H 'Content-Type: application/json' \\
      -d '{"domain":"acme.test"}'
    curl ${cacert} ${service.baseUrl}/emails \\
      -H 'Authorization: Bearer ${service.apiKey}' -H 'Content-Type: application/json' \\
      -d '{"from":"Acme <hello@acme.test>","to":"success@simulator.amazonses.com","subject":"Hi","text":"Hello"}'

  Ctrl+C stops it.
`);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await service.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  console.error(code === 'EADDRINUSE' ? `Port ${port} is in use; set PORT to another one.` : String(error));
  process.exit(1);
}

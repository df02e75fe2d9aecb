#!/usr/bin/env node
/**
 * `npm start`: the whole service on this machine over HTTPS, with embedded emulators.
 *   PORT=3000                 HTTPS port of the API (0: any free port)
 *   DEV_API_KEY=esk_...       accept this key instead of printing a new one
 *   LOCAL_DATA_DIR=...        where data survives restarts (default .local-data)
 *   VIEWER_PORT=8005          port of the sent-mail viewer (default 8005, or any free one if taken)
 *   INBOUND_SMTP_PORT=2525    port of the inbound SMTP endpoint (default 2525, or any free one if taken)
 *   SMTP_RELAY_PORT=2587      the SMTP relay's STARTTLS port (default 2587, or any free one if taken)
 *   SMTP_RELAY_TLS_PORT=2465  the SMTP relay's implicit TLS port (default 2465, or any free one if taken)
 *   RATE_LIMIT_PER_SECOND=10  requests per second per API key (the stack's keyRateLimit)
 *   LOCAL_FAULTS='{…}'        faults to inject into the stand-ins for AWS (see local/faults.ts)
 *   LOCAL_SES_MAX_SEND_RATE=14, LOCAL_SES_MAX_24H_SEND=50000, LOCAL_SES_SANDBOX=true,
 *   LOCAL_SES_SENDING_PAUSED=true   the local SES account's limits (local/ses-account.ts)
 *   LOCAL_SQS_MAX_IN_FLIGHT=120000  most messages in flight on one local queue (local/sqs-in-flight.ts)
 *   LOG_FORMAT=json           a JSON line per request, and the functions' own log lines from INFO up
 *                             (default: one readable line per request, the functions' from WARN up)
 *   --in-memory               keep nothing between runs
 */
import { readFileSync } from 'node:fs';
import { log } from '../functions/observability/logger.js';
import { parseFaults } from '../local/faults.js';
import type { GatewayAnswer } from '../local/https-gateway.js';
import { DataDirInUse, startLocalService } from '../local/service.js';
import { LocalSesAccount, type SesAccountSettings, sesAccountFromEnv } from '../local/ses-account.js';

const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};
const portFrom = (name: string, fallback: number) => {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`${name} must be a port number, got ${text}`);
  return port;
};

const inMemory = process.argv.includes('--in-memory') || process.env.LOCAL_IN_MEMORY === '1';
const port = portFrom('PORT', 3000);
const viewerPortChosen = Boolean(process.env.VIEWER_PORT);
const viewerPort = portFrom('VIEWER_PORT', 8005);
const inboundPortChosen = Boolean(process.env.INBOUND_SMTP_PORT);
const inboundPort = portFrom('INBOUND_SMTP_PORT', 2525);
const relayPortChosen = Boolean(process.env.SMTP_RELAY_PORT);
const relayPort = portFrom('SMTP_RELAY_PORT', 2587);
const relayTlsPortChosen = Boolean(process.env.SMTP_RELAY_TLS_PORT);
const relayTlsPort = portFrom('SMTP_RELAY_TLS_PORT', 2465);
const rateText = process.env.RATE_LIMIT_PER_SECOND;
const rateLimitPerSecond = rateText ? Number(rateText) : 10;
if (!Number.isInteger(rateLimitPerSecond) || rateLimitPerSecond < 1)
  fail(`RATE_LIMIT_PER_SECOND must be a whole number of requests per second, got ${rateText}`);
let faults: ReturnType<typeof parseFaults> = {};
let sesAccount: SesAccountSettings = {};
try {
  faults = parseFaults(process.env.LOCAL_FAULTS);
  sesAccount = sesAccountFromEnv();
} catch (error) {
  fail(String((error as Error).message));
}
const account = new LocalSesAccount(sesAccount);
const logFormat = process.env.LOG_FORMAT || 'text';
if (logFormat !== 'text' && logFormat !== 'json') fail(`LOG_FORMAT must be text or json, got ${logFormat}`);
// Readable by default: a line per request, and of the functions' own lines only warnings and errors
// (their INFO lines, a domain check's every second among them, buried the key and the addresses).
if (!process.env.LOG_LEVEL) process.env.LOG_LEVEL = logFormat === 'text' ? 'WARN' : 'INFO';
/**
 * Started in the background of a terminal (`npm start &`): reading the terminal would stop it
 * (SIGTTIN), so Enter is not listened for. Linux says so in /proc (the terminal's foreground group
 * is not this one's); elsewhere it is taken to be in the foreground.
 */
const inBackground = () => {
  if (!process.stdin.isTTY) return false;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const [, , pgrp, , , tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return pgrp !== tpgid;
  } catch {
    return false;
  }
};
const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 8);
const printRequest = (answer: GatewayAnswer) =>
  console.log(
    logFormat === 'json'
      ? JSON.stringify({
          level: 'INFO',
          message: 'request',
          timestamp: new Date().toISOString(),
          method: answer.method,
          path: answer.path,
          status: answer.status,
          duration_ms: answer.durationMs,
          request_id: answer.requestId,
        })
      : `${clock(Date.now())}  ${answer.status}  ${answer.method} ${answer.path}  ${answer.durationMs} ms`,
  );

try {
  const service = await startLocalService({
    port,
    dataDir: inMemory ? null : (process.env.LOCAL_DATA_DIR ?? '.local-data'),
    apiKey: process.env.DEV_API_KEY || undefined,
    viewerPort,
    viewerPortRequired: viewerPortChosen,
    inboundSmtpPort: inboundPort,
    inboundSmtpPortRequired: inboundPortChosen,
    smtpRelayPort: relayPort,
    smtpRelayPortRequired: relayPortChosen,
    smtpRelayTlsPort: relayTlsPort,
    smtpRelayTlsPortRequired: relayTlsPortChosen,
    rateLimitPerSecond,
    faults,
    sesAccount,
    log: log.warn,
    onRequest: printRequest,
    // The emulators (with the local SES) and the consumers each on a thread of their own.
    threads: true,
  });
  const cacert = service.certificatePath ? `--cacert ${service.certificatePath}` : '-k';
  const viewerNote =
    service.viewerPortTaken === undefined
      ? '(what the local SES received)'
      : `(port ${service.viewerPortTaken} was taken; VIEWER_PORT picks another)`;
  const inboundNote =
    service.inboundSmtpPortTaken === undefined
      ? '(mail to domains with receiving enabled)'
      : `(port ${service.inboundSmtpPortTaken} was taken; INBOUND_SMTP_PORT picks another)`;
  const relay = service.smtpRelay;
  const relayNote = [
    relay.portTaken === undefined ? '' : `port ${relay.portTaken} was taken; SMTP_RELAY_PORT picks another`,
    relay.tlsPortTaken === undefined
      ? ''
      : `port ${relay.tlsPortTaken} was taken; SMTP_RELAY_TLS_PORT picks another`,
  ]
    .filter(Boolean)
    .join('; ');
  console.log(`
  Email service running locally (HTTPS only)

  Base URL     ${service.baseUrl}
  Console      ${service.baseUrl.replace(/\/v1$/, '')}/   (the web console; sign in there with the key below)
  API key      ${service.apiKey}   (full access${process.env.DEV_API_KEY ? ', from DEV_API_KEY' : '; shown once, a new one each start'})
  Reference    ${service.baseUrl.replace(/\/v1$/, '')}/docs   (the API reference; ${service.baseUrl}/openapi.json: OpenAPI 3.1)
  Sent mail    ${service.viewerUrl}   ${viewerNote}
  Inbound SMTP smtp://${service.inboundSmtp.host}:${service.inboundSmtp.port}   ${inboundNote}
  SMTP relay   ${relay.host} port ${relay.port} (STARTTLS), port ${relay.tlsPort} (implicit TLS)   (user resend, password an API key${relayNote ? `; ${relayNote}` : ''})
  Tracking     ${service.endpoints.sesTracking}   (the local SES's tracking host: tracked emails' pixel and links)
  Data         ${inMemory ? 'in memory (gone when this stops)' : `${process.env.LOCAL_DATA_DIR ?? '.local-data'}/ (kept across restarts)`}
  Rate limit   ${rateLimitPerSecond} requests per second per key${Object.keys(faults).length ? `\n  Faults       ${JSON.stringify(faults)}   (LOCAL_FAULTS)` : ''}
  Local SES    ${account.maxSendRate} emails per second, ${account.max24HourSend.toLocaleString('en-US')} per 24 hours${account.sandbox ? ', sandbox (verified recipients only)' : ''}${sesAccount.sendingPaused ? ', sending PAUSED' : ''}   (LOCAL_SES_*)
  TLS          self-signed for localhost; curl ${cacert} ...
  Webhooks     POSTed for real to each endpoint (http://localhost:… allowed here${process.env.WEBHOOK_ALLOW_LOOPBACK === 'false' ? ': no, WEBHOOK_ALLOW_LOOPBACK=false' : ''});
               attempts: GET ${service.baseUrl}/webhooks/{id}/events, then …/events/{event_id}/attempts

  Try it: add a sending domain (locally it is verified by itself a few seconds later;
  a name under .invalid never is), then send from it:
    curl ${cacert} ${service.baseUrl}/domains \\
      -H 'Authorization: Bearer ${service.apiKey}' -H 'Content-Type: application/json' \\
      -d '{"domain":"acme.test"}'
    curl ${cacert} ${service.baseUrl}/emails \\
      -H 'Authorization: Bearer ${service.apiKey}' -H 'Content-Type: application/json' \\
      -d '{"from":"Acme <hello@acme.test>","to":"success@simulator.amazonses.com","subject":"Hi","text":"Hello"}'

  Ctrl+C stops it; Enter prints the key and the addresses again.
`);
  // The key and the addresses, again: on Enter, and when it stops (requests scroll them away).
  const summary = () => `
  Base URL     ${service.baseUrl}
  Console      ${service.baseUrl.replace(/\/v1$/, '')}/
  API key      ${service.apiKey}
  Sent mail    ${service.viewerUrl}
  Inbound SMTP smtp://${service.inboundSmtp.host}:${service.inboundSmtp.port}
  SMTP relay   ${service.smtpRelay.host} port ${service.smtpRelay.port} (STARTTLS), port ${service.smtpRelay.tlsPort} (implicit TLS)
  TLS          curl ${cacert} ...
`;
  if (!inBackground()) {
    process.stdin.on('data', (chunk: Buffer) => {
      if (chunk.includes(0x0a) || chunk.includes(0x0d)) console.log(summary());
    });
    process.stdin.on('error', () => undefined);
  }
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    console.log(`  Stopping.${summary()}`);
    await service.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
} catch (error) {
  if (error instanceof DataDirInUse)
    fail(
      `Another npm start (process ${error.pid}) is still using ${error.dataDir}/: stop it first (kill ${error.pid}), ` +
        'or set LOCAL_DATA_DIR to another folder. (Killing npm itself leaves its node process running.)',
    );
  const { code, port: taken } = error as NodeJS.ErrnoException & { port?: number };
  if (code !== 'EADDRINUSE') fail(String(error));
  if (relayPortChosen && taken === relayPort)
    fail(
      `Port ${relayPort} (SMTP_RELAY_PORT, the SMTP relay's STARTTLS port) is in use; set SMTP_RELAY_PORT to another one.`,
    );
  if (relayTlsPortChosen && taken === relayTlsPort)
    fail(
      `Port ${relayTlsPort} (SMTP_RELAY_TLS_PORT, the SMTP relay's implicit TLS port) is in use; set SMTP_RELAY_TLS_PORT to another one.`,
    );
  if (inboundPortChosen && taken === inboundPort)
    fail(
      `Port ${inboundPort} (INBOUND_SMTP_PORT, the inbound SMTP endpoint) is in use; set INBOUND_SMTP_PORT to another one.`,
    );
  if (viewerPortChosen && taken === viewerPort)
    fail(`Port ${viewerPort} (VIEWER_PORT, the sent-mail viewer) is in use; set VIEWER_PORT to another one.`);
  fail(`Port ${port} is in use; set PORT to another one.`);
}

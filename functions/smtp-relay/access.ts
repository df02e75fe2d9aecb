import { routeSpec } from '../catalog.js';
import { sendEmailRoute } from '../emails/routes.js';

/**
 * What the SMTP relay may do on AWS (issue 42): exactly what the send path holds (POST /v1/emails'
 * function, with its key lookup and rate counting), since every accepted message is a send; plus
 * its own settings, and reading the STARTTLS certificate's secret when it has one. The stack grants
 * the relay's task role from this (lib/constructs/smtp-relay.ts); the local twin answers the
 * relay's calls as AWS answers that role.
 */
const send = routeSpec(sendEmailRoute);

export const SMTP_RELAY_SPEC = {
  ...send,
  description: 'The SMTP relay: SMTP submissions become emails (issue 42)',
  env: [
    ...send.env,
    'SMTP_RELAY_HOSTNAME',
    'SMTP_RELAY_STARTTLS_PORT',
    'SMTP_RELAY_SECURED_PORT',
    'SMTP_RELAY_HEALTH_PORT',
    'SMTP_RELAY_PROXY_PROTOCOL',
  ],
  optionalEnv: [...(send.optionalEnv ?? []), 'SMTP_RELAY_TLS_SECRET_ARN', 'SMTP_RELAY_TLS_RELOAD_SECONDS'],
} as const;

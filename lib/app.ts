import { type App, Stack } from 'aws-cdk-lib';
import { FrontDoorFirewall } from './constructs/front-door.js';
import type { SmtpRelayNetwork } from './constructs/smtp-relay.js';
import { EmailServiceStack, type EmailServiceStackProps } from './email-service-stack.js';

/**
 * The deployable app from its settings (`-c key=value` or cdk.json "context"): the service's stack,
 * and with the front door on outside us-east-1, the firewall's stack in us-east-1 (CloudFront takes
 * its web ACL from there; CDK passes its ARN across regions through SSM parameters).
 */
export function buildApp(app: App, env: { account?: string; region?: string }) {
  const context = (key: string): string | undefined => {
    const value = app.node.tryGetContext(key);
    return value === undefined ? undefined : String(value);
  };
  const number = (key: string) => {
    const value = context(key);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new Error(`The setting ${key} must be a number, not "${value}"`);
    return parsed;
  };
  const flag = (key: string) => {
    const value = context(key);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false')
      throw new Error(`The setting ${key} must be true or false, not "${value}"`);
    return value === 'true';
  };
  const name = context('stackName') ?? 'EmailService';
  const frontDoorOn = context('frontDoor') === 'true';
  const frontDoorLimit = number('frontDoorRateLimit');

  let firewall: Stack | undefined;
  let webAclArn: string | undefined;
  if (frontDoorOn && env.region !== 'us-east-1') {
    if (!env.account || !env.region)
      throw new Error(
        'The front door outside us-east-1 needs the account and region known at synth time (CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION, set by the CDK CLI from your credentials).',
      );
    firewall = new Stack(app, `${name}FrontDoorFirewall`, {
      env: { account: env.account, region: 'us-east-1' },
      crossRegionReferences: true,
      description: `The ${name} API front door's web ACL (CloudFront takes it from us-east-1)`,
    });
    webAclArn = new FrontDoorFirewall(firewall, 'Firewall', { requestsPerFiveMinutes: frontDoorLimit }).webAcl
      .attrArn;
  }

  const logLevel = context('logLevel');
  if (logLevel !== undefined && !['DEBUG', 'INFO', 'WARN', 'ERROR'].includes(logLevel))
    throw new Error(`The setting logLevel must be DEBUG, INFO, WARN or ERROR, not "${logLevel}"`);
  const service = new EmailServiceStack(app, name, {
    env,
    crossRegionReferences: firewall !== undefined,
    sendConcurrency: number('sendConcurrency'),
    sendBatchSize: number('sendBatchSize'),
    sesMaxSendRate: number('sesMaxSendRate'),
    sesSendRate: number('sesSendRate'),
    sendMaxAttempts: number('sendMaxAttempts'),
    apiRateLimit: number('apiRateLimit'),
    apiBurstLimit: number('apiBurstLimit'),
    domainCheckMinutes: number('domainCheckMinutes'),
    keyRateLimit: number('keyRateLimit'),
    webhookConcurrency: number('webhookConcurrency'),
    sesEventsConcurrency: number('sesEventsConcurrency'),
    contentRetentionDays: number('contentRetentionDays'),
    receivedRetentionDays: number('receivedRetentionDays'),
    receivedVirusDownloads: flag('receivedVirusDownloads'),
    listingShards: number('listingShards'),
    emailRetentionDays: number('emailRetentionDays'),
    logRetentionDays: number('logRetentionDays'),
    upgradeStep: number('upgradeStep') as EmailServiceStackProps['upgradeStep'],
    deflateBodies: flag('deflateBodies'),
    requestLogs: flag('requestLogs'),
    requestLogsOutliveEmails: flag('requestLogsOutliveEmails'),
    requestLogBodies: flag('requestLogBodies'),
    legacyDomainSets: flag('legacyDomainSets'),
    alarmEmail: context('alarmEmail'),
    trackingHttpsTarget: context('trackingHttpsTarget'),
    logLevel: logLevel as EmailServiceStackProps['logLevel'],
    // The opt-in SMTP relay (docs/operations.md, "SMTP relay"): checked by its construct.
    smtpRelay: flag('smtpRelay')
      ? {
          hostname: context('smtpRelayHostname') as string,
          certificateArn: context('smtpRelayCertificateArn') as string,
          tlsSecretArn: context('smtpRelayTlsSecretArn'),
          network: context('smtpRelayNetwork') as SmtpRelayNetwork | undefined,
          maxTasks: number('smtpRelayMaxTasks'),
        }
      : undefined,
    frontDoor: frontDoorOn
      ? {
          webAclArn,
          requestsPerFiveMinutes: frontDoorLimit,
          originDomainName: context('frontDoorDomain') as string,
          originCertificateArn: context('frontDoorCertificateArn') as string,
        }
      : undefined,
  });
  return { service, firewall };
}

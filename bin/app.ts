#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EmailServiceStack } from '../lib/email-service-stack.js';

const app = new App();
// Settings: `npx cdk deploy -c sendConcurrency=10 -c apiRateLimit=100` or cdk.json "context".
const number = (key: string) => {
  const value = app.node.tryGetContext(key);
  return value === undefined ? undefined : Number(value);
};
new EmailServiceStack(app, app.node.tryGetContext('stackName') ?? 'EmailService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  sendConcurrency: number('sendConcurrency'),
  sendMaxAttempts: number('sendMaxAttempts'),
  apiRateLimit: number('apiRateLimit'),
  apiBurstLimit: number('apiBurstLimit'),
  domainCheckMinutes: number('domainCheckMinutes'),
  keyRateLimit: number('keyRateLimit'),
});

// Security review on every synth and deploy: the AWS Solutions rules of cdk-nag. What the stack
// acknowledges carries its reason in lib/email-service-stack.ts.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildApp } from '../lib/app.js';

const app = new App();
// Settings: `npx cdk deploy -c sendConcurrency=10 -c alarmEmail=ops@example.com` or cdk.json
// "context"; every setting is in docs/operations.md, "Stack settings".
buildApp(app, { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION });

// Security review on every synth and deploy: the AWS Solutions rules of cdk-nag. What the stack
// acknowledges carries its reason next to the resource it is about.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

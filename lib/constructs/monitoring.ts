import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  type AlarmProps,
  Column,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  type IWidget,
  MathExpression,
  Metric,
  Row,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { CounterName } from '../../functions/shared/ports.js';

/** The dashboard's sections, top to bottom. */
export const DASHBOARD_SECTIONS = ['emails', 'events', 'queues', 'api', 'functions'] as const;
export type DashboardSection = (typeof DASHBOARD_SECTIONS)[number];

export interface MonitoringProps {
  /** Where alarm notifications are also sent by email (SNS asks the address to confirm first). @default none */
  readonly alarmEmail?: string;
  /** The namespace of the service's own metrics. @default 'EmailService' */
  readonly metricsNamespace?: string;
  /** The service dimension of its metrics (Powertools' `service`). @default the stack's name */
  readonly serviceName?: string;
}

/**
 * Where the service tells people something is wrong: one SNS topic every alarm notifies (when it
 * goes off and when it clears), with an optional email subscription, and one CloudWatch dashboard
 * with the pipeline at a glance. The other constructs add their alarms and widgets to it; what
 * each alarm means and what to do about it is in docs/operations.md, "Operate".
 */
export class Monitoring extends Construct {
  public readonly alarmTopic: Topic;
  public readonly dashboard: Dashboard;
  public readonly alarms: Alarm[] = [];
  /** The namespace and the service dimension of the service's own metrics (Powertools'). */
  public readonly namespace: string;
  private readonly sections = Object.fromEntries(
    DASHBOARD_SECTIONS.map((name) => [name, new Column()]),
  ) as Record<DashboardSection, Column>;
  public readonly serviceName: string;

  constructor(scope: Construct, id: string, props: MonitoringProps = {}) {
    super(scope, id);
    this.namespace = props.metricsNamespace ?? 'EmailService';
    this.serviceName = props.serviceName ?? Stack.of(this).stackName;
    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: `${Stack.of(this).stackName} alarms`,
      enforceSSL: true,
    });
    // The topic's policy (HTTPS only) replaces SNS's default one, which let the account's services
    // publish: CloudWatch needs its own allowance, for this account's alarms only.
    const stack = Stack.of(this);
    this.alarmTopic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AlarmsPublish',
        actions: ['sns:Publish'],
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        resources: [this.alarmTopic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${Stack.of(this).stackName}-pipeline`,
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${Stack.of(this).stackName}\nAccepted → sent → delivered, what failed and why, the queues, the functions and SES's reputation. Alarms: see docs/operations.md, "Operate".`,
        width: 24,
        height: 2,
      }),
    );
    for (const section of DASHBOARD_SECTIONS) this.dashboard.addWidgets(this.sections[section]);
  }

  /** One of the service's own counters (functions/shared/ports.ts COUNTERS), summed per period. */
  counter(name: CounterName, period = Duration.minutes(5)): Metric {
    return new Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: this.serviceName },
      statistic: 'Sum',
      period,
    });
  }

  /** An alarm on `metric`, notifying the topic when it goes off and when it clears. */
  alarm(
    id: string,
    metric: IMetric,
    props: Omit<AlarmProps, 'metric' | 'evaluationPeriods'> & { evaluationPeriods?: number },
  ): Alarm {
    const alarm = new Alarm(this, id, {
      metric,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      ...props,
    });
    alarm.addAlarmAction(new SnsAction(this.alarmTopic));
    alarm.addOkAction(new SnsAction(this.alarmTopic));
    this.alarms.push(alarm);
    return alarm;
  }

  /**
   * Errors and throttles of a group of functions, one alarm each (metric math over at most ten
   * functions, CloudWatch's limit for an alarm), and their graph.
   */
  watchFunctions(id: string, functions: readonly { function: IFunction; name: string }[], what: string) {
    if (functions.length > 10) throw new Error(`${id}: one alarm watches at most 10 functions`);
    const sum = (metric: 'Errors' | 'Throttles') =>
      new MathExpression({
        // Ids unique across both sums: they share a graph.
        expression: functions.map((_, i) => `${metric.toLowerCase()}${i}`).join(' + '),
        usingMetrics: Object.fromEntries(
          functions.map((fn, i) => [
            `${metric.toLowerCase()}${i}`,
            fn.function.metric(metric, { statistic: 'Sum', period: Duration.minutes(5) }),
          ]),
        ),
        label: `${what}: ${metric.toLowerCase()}`,
        period: Duration.minutes(5),
      });
    this.alarm(`${id}Errors`, sum('Errors'), {
      threshold: 1,
      alarmDescription: `${what} failed (threw or timed out) at least once in 5 minutes: see their logs.`,
    });
    this.alarm(`${id}Throttles`, sum('Throttles'), {
      threshold: 1,
      alarmDescription: `${what} were throttled by Lambda (the account's concurrency is used up).`,
    });
    this.addRow(
      'functions',
      new GraphWidget({
        title: `${what}: errors and throttles`,
        left: [sum('Errors'), sum('Throttles')],
        width: 12,
      }),
      new GraphWidget({
        title: `${what}: duration p99`,
        left: functions.map((fn) => fn.function.metricDuration({ statistic: 'p99', label: fn.name })),
        width: 12,
      }),
    );
  }

  /**
   * A row of the dashboard, in its section: the dashboard reads top to bottom in the order of
   * DASHBOARD_SECTIONS whatever order the constructs are built in.
   */
  addRow(section: DashboardSection, ...widgets: IWidget[]) {
    this.sections[section].addWidget(new Row(...widgets));
  }
}

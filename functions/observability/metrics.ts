import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CounterName, Counters } from '../core/ports.js';

/**
 * The service's metrics (Powertools, CloudWatch embedded metric format): a line on stdout per
 * invocation that counted something, turned into metrics by CloudWatch Logs, so counting costs no
 * API call on the hot path. Namespace from POWERTOOLS_METRICS_NAMESPACE (the stack sets it); one
 * dimension, the service. Off locally and in tests (POWERTOOLS_METRICS_DISABLED).
 *
 * Built on first use, so that the environment it reads is the function's (the local runtime sets
 * it after this module is loaded).
 */
let instance: Metrics | undefined;
const metrics = () =>
  (instance ??= new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'EmailService',
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'email-service',
  }));

export const counters: Counters = {
  count: (name: CounterName, value = 1) => metrics().addMetric(name, MetricUnit.Count, value),
};

/** Writes what this invocation counted, if anything (Powertools warns when there is nothing). */
export function flushMetrics(): void {
  if (instance?.hasStoredMetrics()) instance.publishStoredMetrics();
}

import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { CounterName, Counters } from '../shared/ports.js';
import { log } from './logger.js';

/**
 * The service's metrics (Powertools, CloudWatch embedded metric format): a line on stdout per
 * invocation that counted something, turned into metrics by CloudWatch Logs, so counting costs no
 * API call on the hot path. Namespace from POWERTOOLS_METRICS_NAMESPACE (the stack sets it); one
 * dimension, the service. Off locally and in tests (POWERTOOLS_METRICS_DISABLED).
 *
 * Powertools' Metrics is loaded and built on the first count, not at init: most invocations of most
 * functions count nothing (a table read counts only a refused rate), and it is 12 KB to load. What
 * is counted before it is loaded waits, in order, and is written with the rest when the invocation
 * ends (`flushMetrics`). It is built then so that the environment it reads is the function's (the
 * local runtime sets it after this module is loaded).
 */
let instance: Metrics | undefined;
let loading: Promise<Metrics> | undefined;
const waiting: Array<[CounterName, number]> = [];
/** Powertools' Metrics class, when a function loaded it at init (metrics-at-init.ts). */
let loaded: typeof Metrics | undefined;

const make = (Class: typeof Metrics) =>
  (instance = new Class({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'EmailService',
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'email-service',
  }));

const load = (): Promise<Metrics> =>
  (loading ??= import('@aws-lambda-powertools/metrics').then(({ Metrics }) => instance ?? make(Metrics)));

/** Gives the counters Powertools' Metrics, loaded already: they count at once, loading nothing later. */
export function provideMetrics(Class: typeof Metrics): Counters {
  loaded = Class;
  return counters;
}

export const counters: Counters = {
  count(name: CounterName, value = 1) {
    if (!instance && loaded) make(loaded);
    if (instance) instance.addMetric(name, 'Count', value);
    else {
      waiting.push([name, value]);
      // Started now, awaited when the invocation ends; a failure is told there.
      load().catch(() => undefined);
    }
  },
};

/**
 * Writes what this invocation counted, if anything (Powertools warns when there is nothing). A
 * failure to load the metrics module loses the counts, said in the log, and never fails the
 * invocation, whose work is done.
 */
export async function flushMetrics(): Promise<void> {
  if (waiting.length) {
    try {
      const metrics = await load();
      for (const [name, value] of waiting.splice(0)) metrics.addMetric(name, 'Count', value);
    } catch (error) {
      loading = undefined;
      log.error('metrics lost: the metrics module could not be loaded', {
        counts: waiting.splice(0).length,
        error,
      });
      return;
    }
  }
  if (instance?.hasStoredMetrics()) instance.publishStoredMetrics();
}

import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Counters } from '../shared/ports.js';
import { provideMetrics } from './metrics.js';

/**
 * The counters, with Powertools' Metrics loaded at init: for the functions whose every invocation
 * counts (a send, a delivery, an event), where loading it on the first count (metrics.ts) would
 * only move its cost into the first request.
 */
export const countersLoadedAtInit = (): Counters => provideMetrics(Metrics);

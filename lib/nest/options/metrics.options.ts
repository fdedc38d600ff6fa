import { z } from 'zod';
import { absentAs, durationInput } from '../../core/input-fields';
import { withReason } from '../../core/input-schema';
import type { DurationInput } from '../../permits/semaphore-definition';
import { optionsObject, parseOption } from './option-schema';

/** Prometheus metrics through `prom-client` (module option `metrics`). Every field is optional. */
export interface MetricsOptions {
  /** Prefix of every metric name. Default `'gatekeeper_'`. */
  prefix?: string;
  /**
   * The prom-client `Registry` to register in. Default: prom-client's global registry (`register`), which
   * `@willsoto/nestjs-prometheus` and most exporters serve.
   */
  registry?: object;
  /** How often the task counts by type and state (one listing of every task) are read again, at most. Default `'30s'`. */
  taskCountsInterval?: DurationInput;
  /** Histogram buckets of job run durations, in seconds. Default: 0.01 s to 10 min. */
  runBuckets?: number[];
  /** Histogram buckets of store call durations, in seconds. Default: 0.5 ms to 5 s. */
  callBuckets?: number[];
}

/** The `metrics` option after defaults and validation. */
export interface ResolvedMetricsOptions {
  readonly prefix: string;
  readonly registry?: object;
  readonly taskCountsMs: number;
  readonly runBuckets: readonly number[];
  readonly callBuckets: readonly number[];
}

const PROMETHEUS_PREFIX = withReason(
  z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/),
  (given) => `must be a Prometheus name prefix (letters, digits, _ and :), got ${JSON.stringify(given)}`,
);

const REGISTRY = z.custom<object>(
  (registry) => registry !== null && typeof (registry as { registerMetric?: unknown }).registerMetric === 'function',
  'must be a prom-client Registry',
);

// zod's numbers are finite; Infinity has always passed here (prom-client adds its own +Inf bucket, so it adds nothing).
const SECONDS = z.union([z.number().positive(), z.literal(Infinity)]);

const BUCKETS = withReason(
  z.array(SECONDS).min(1).refine((buckets) => buckets.every((bucket, i) => i === 0 || bucket > buckets[i - 1])),
  (given) => `must be growing positive numbers of seconds, got ${JSON.stringify(given)}`,
);

export const METRICS_OPTIONS = optionsObject(
  {
    prefix: absentAs('gatekeeper_', PROMETHEUS_PREFIX),
    registry: REGISTRY.optional(),
    taskCountsInterval: absentAs('30s', durationInput()),
    runBuckets: absentAs([0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600], BUCKETS),
    callBuckets: absentAs([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5], BUCKETS),
  } satisfies Record<keyof MetricsOptions, z.ZodType>,
  // `true` is read as `{}` before this (so `got …` is the option as given); a list is read as an object of its indexes.
  { notObject: (given) => `must be true, false or an object, got ${JSON.stringify(given)}`, lists: true },
);

/** Validates the `metrics` option; `undefined` when metrics are off. Throws naming the field. */
export function resolveMetricsOptions(metrics: boolean | MetricsOptions | undefined): ResolvedMetricsOptions | undefined {
  if (metrics === undefined || metrics === false) return undefined;
  const { prefix, registry, taskCountsInterval, runBuckets, callBuckets } = parseOption(METRICS_OPTIONS, metrics === true ? {} : metrics, 'metrics');
  return { prefix, ...(registry !== undefined && { registry }), taskCountsMs: taskCountsInterval, runBuckets, callBuckets };
}

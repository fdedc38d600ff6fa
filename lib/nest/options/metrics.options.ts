import { parseOptionDuration } from '../../core/duration';
import { InvalidOptionsError } from '../../core/errors/invalid-options.error';
import type { DurationInput } from '../../permits/semaphore-definition';

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

const KEYS: ReadonlyArray<keyof MetricsOptions> = ['prefix', 'registry', 'taskCountsInterval', 'runBuckets', 'callBuckets'];

/** Validates the `metrics` option; `undefined` when metrics are off. Throws naming the field. */
export function resolveMetricsOptions(metrics: boolean | MetricsOptions | undefined): ResolvedMetricsOptions | undefined {
  if (metrics === undefined || metrics === false) return undefined;
  const given: MetricsOptions = metrics === true ? {} : metrics;
  if (given === null || typeof given !== 'object') throw new InvalidOptionsError('metrics', `must be true, false or an object, got ${JSON.stringify(metrics)}`);
  for (const key of Object.keys(given)) {
    if (!(KEYS as readonly string[]).includes(key)) throw new InvalidOptionsError(`metrics.${key}`, `is not an option (expected one of ${KEYS.join(', ')})`);
  }
  const prefix = given.prefix ?? 'gatekeeper_';
  if (typeof prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) {
    throw new InvalidOptionsError('metrics.prefix', `must be a Prometheus name prefix (letters, digits, _ and :), got ${JSON.stringify(prefix)}`);
  }
  if (given.registry !== undefined && (given.registry === null || typeof (given.registry as { registerMetric?: unknown }).registerMetric !== 'function')) {
    throw new InvalidOptionsError('metrics.registry', 'must be a prom-client Registry');
  }
  const buckets = (field: 'runBuckets' | 'callBuckets', fallback: number[]) => {
    const value = given[field] ?? fallback;
    if (!Array.isArray(value) || value.length === 0 || !value.every((b, i) => typeof b === 'number' && b > 0 && (i === 0 || b > value[i - 1]))) {
      throw new InvalidOptionsError(`metrics.${field}`, `must be growing positive numbers of seconds, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  return {
    prefix,
    ...(given.registry !== undefined && { registry: given.registry }),
    taskCountsMs: parseOptionDuration(given.taskCountsInterval ?? '30s', 'metrics.taskCountsInterval'),
    runBuckets: buckets('runBuckets', [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600]),
    callBuckets: buckets('callBuckets', [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5]),
  };
}

/*
 * What a workload node runs, shared by the process (workload-app.ts) and the test that starts it
 * (node-process.ts): the job list and settings travel as environment variables.
 */
import type { DurationInput, SemaphoreDefinitionInput } from '../../lib';
import { join } from 'node:path';
import { storeTargetEnv, type StoreTarget } from './store-target';

/** One scheduled job of a workload node: a `@ClusterSingleton` method ticking every `intervalMs`. */
export interface WorkloadJob {
  semaphore: string;
  /** The decorator's permit duration (used when the semaphore gets auto-defined). */
  duration: DurationInput;
  /** Tick period. Ticks are aligned to multiples of it in real time, like `@Cron` slots, so nodes agree on tick numbers. */
  intervalMs: number;
  /** How long one run works. */
  runMs: number;
  /** A side effect every this many ms of a run, each after `lease.assertValid()`. At least 1. */
  effectEveryMs: number;
  mode?: 'hold' | 'release';
  lockAtLeastFor?: DurationInput;
  keepAlive?: boolean;
  maxRunTime?: DurationInput;
  /** Name of the job in the history (default: the semaphore); unique per node. */
  name?: string;
}

/** Settings of one workload node. */
export interface WorkloadSettings {
  /** NODE_NAME: the acquirer, and the `node` of its history events. */
  name: string;
  historyFile: string;
  jobs: WorkloadJob[];
  /** The Hazelcast cluster, the PostgreSQL server (`{ postgresUrl }`) or the Redis server (`{ redisUrl }`). */
  cluster: StoreTarget;
  mapPrefix: string;
  group?: string;
  /** This node's gatekeeper clock (the module's `clock` option) runs this far ahead of real time (negative: behind). */
  clockOffsetMs?: number;
  /**
   * This node's wall clock (`Date.now()`, `new Date()`: the whole process, as on a machine whose clock is off) runs
   * this far ahead of real time (negative: behind), through the shift-clock.cjs preload. Its history stays in real time.
   */
  wallClockShiftMs?: number;
  /** Each SIGUSR2 steps this node's wall clock this much further (an NTP step; needs the preload, so with `wallClockShiftMs`). */
  wallClockStepMs?: number;
  maxClockSkew?: DurationInput;
  /** Definitions the node loads at startup (e.g. `permits: 2`); others are auto-defined from the decorators. */
  definitions?: SemaphoreDefinitionInput[];
}

/** The environment a workload process reads (see workload-app.ts). */
export function workloadEnv(s: WorkloadSettings): NodeJS.ProcessEnv {
  for (const job of s.jobs) {
    if (!(job.effectEveryMs >= 1) || !(job.intervalMs >= 1)) throw new RangeError(`job ${job.name ?? job.semaphore}: intervalMs and effectEveryMs must be >= 1`);
  }
  return {
    NODE_NAME: s.name,
    HISTORY_FILE: s.historyFile,
    WORKLOAD: JSON.stringify(s.jobs),
    MAP_PREFIX: s.mapPrefix,
    ...storeTargetEnv(s.cluster),
    ...(s.group !== undefined && { GROUP: s.group }),
    ...(s.clockOffsetMs !== undefined && { CLOCK_OFFSET_MS: String(s.clockOffsetMs) }),
    ...((s.wallClockShiftMs !== undefined || s.wallClockStepMs !== undefined) && {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${join(__dirname, 'shift-clock.cjs')}`.trim(),
      CLOCK_SHIFT_MS: String(s.wallClockShiftMs ?? 0),
      CLOCK_STEP_MS: String(s.wallClockStepMs ?? 0),
      HISTORY_REAL_TIME: '1',
    }),
    ...(s.maxClockSkew !== undefined && { MAX_CLOCK_SKEW: String(s.maxClockSkew) }),
    ...(s.definitions !== undefined && { DEFINITIONS: JSON.stringify(s.definitions) }),
  };
}

import { Redlock } from '@sesamecare-oss/redlock';
import { Client, type ClientConfig, type IMap } from 'hazelcast-client';
import Redis from 'ioredis';
import { HazelcastPermitStore } from '../lib/cli/hazelcast-permit.store';
import { PermitEngine } from '../lib/permits/permit.engine';
import type { PermitStore } from '../lib/permits/permit-store';
import { systemClock } from '../lib/core/clock';
import { HazelcastConnection } from '../lib/backends/hazelcast/hazelcast-connection';
import { HistoryRecorder } from '../lib/schedules/history-recorder';
import { HistoryRecordStore } from '../lib/schedules/history-record.store';
import { CronTrigger } from '../lib/nest/schedule-metadata/cron-trigger';
import { HazelcastBackend } from '../lib/backends/hazelcast/hazelcast-backend';
import type { Permit } from '../lib';

/**
 * One node of a system under test: try to get (or keep) the right to run `key` for `durationMs`, and give it
 * back. Every system counts its own round trips to its store.
 */
export interface BenchNode {
  acquire(key: string, durationMs: number): Promise<boolean>;
  release(key: string, lockAtLeastForMs?: number): Promise<void>;
  roundTrips(): number;
  close(): Promise<void>;
}

/** Ours: the decorator's path (local answers, compare-and-set), on its own Hazelcast client. */
export async function gatekeeperNode(name: string, config: ClientConfig, mapPrefix: string, local = true): Promise<BenchNode & { engine: PermitEngine; store: HazelcastPermitStore }> {
  const store = new HazelcastPermitStore({ clientConfig: config, mapPrefix });
  await store.connect({ clock: systemClock });
  return { ...engineNode(name, store, local), store };
}

/** A permit engine over `store` (connected) as a bench node: the decorator's decisions, with its round trips counted. */
export function engineNode(name: string, store: PermitStore, local: boolean): BenchNode & { engine: PermitEngine } {
  const engine = new PermitEngine(store, { acquirer: name, group: 'bench', instance: `${name}/${process.pid}` }, systemClock, { clockSkewMs: 100 });
  const held = new Map<string, Permit>();
  return {
    engine,
    async acquire(key) {
      const result = await engine.tryAcquire(key, { local });
      if (result.granted) held.set(key, result.permit);
      else held.delete(key);
      return result.granted;
    },
    async release(key, lockAtLeastForMs = 0) {
      const permit = held.get(key);
      if (permit) await engine.release(permit, permit.refreshedAt + lockAtLeastForMs);
      held.delete(key);
    },
    roundTrips: () => store.operationCount(),
    close: () => store.close(),
  };
}

/**
 * Ours with the run history on: every run a node makes is noted and written in batches (`HistoryRecorder`, every
 * 10 s as the module's default), its calls counted with the permits'. What history adds to a held tick.
 */
export async function gatekeeperHistoryNode(name: string, config: ClientConfig, mapPrefix: string, ledger = false): Promise<BenchNode> {
  const connection = new HazelcastConnection({ clientConfig: config });
  const store = new HazelcastPermitStore({ connection, mapPrefix });
  await store.connect({ clock: systemClock });
  const history = new HistoryRecordStore(new HazelcastBackend({ connection, mapPrefix }));
  await history.connect();
  return historyNode(name, store, history, ledger);
}

/** The bench's ticks as a cron job's: every second, its instants judged by the slot ledger when it is on. */
const EVERY_SECOND = CronTrigger.fromExpression('* * * * * *', 'UTC') as CronTrigger;

/**
 * A node of ours that records its runs (and, with `ledger`, judges its instants in the slot ledger): a decorator's held tick with the run history on, on whatever stores it is
 * given (connected), both closed with the node. Every backend's history row is this node.
 */
export function historyNode(name: string, store: PermitStore & { operationCount(): number; close(): Promise<void> }, history: HistoryRecordStore, ledger = false): BenchNode {
  const instance = `${name}/${process.pid}`;
  const recorder = new HistoryRecorder(history, {
    keep: 20, flushIntervalMs: 10_000, callTimeoutMs: 5_000, identity: { instance, node: name }, clock: systemClock,
    ...(ledger && { judge: () => ({ calendar: EVERY_SECOND }) }),
  });
  recorder.start();
  const instants = new Map<string, number>();
  const engine = new PermitEngine(store, { acquirer: name, group: 'bench', instance }, systemClock, { clockSkewMs: 100 });
  return {
    async acquire(key) {
      const result = await engine.tryAcquire(key, { local: true });
      if (!result.granted) {
        recorder.skippedTick(key, result.reason);
        return false;
      }
      // Each tick is the job's next instant, a second after the one before, as a cron job's every-second ticks are
      // (named from the clock, a tick that drifts across a second would leave one instant unticked: missed).
      const instant = (instants.get(key) ?? Math.floor(Date.now() / 1000) * 1000 - 1000) + 1000;
      instants.set(key, instant);
      const run = recorder.started({ job: key, trigger: 'schedule', instant, token: result.permit.fencingToken });
      recorder.finished(run, 'completed', 0);
      return true;
    },
    async release() {},
    roundTrips: () => store.operationCount() + history.operationCount(),
    async close() {
      await recorder.stop();
      await history.close();
      await store.close();
    },
  };
}

/** Seed 000's pessimistic baseline: a map lock around read-modify-write of the holder record, on every decision. */
export async function pessimisticNode(name: string, config: ClientConfig, mapName: string): Promise<BenchNode> {
  const client = await Client.newHazelcastClient(config);
  const map: IMap<string, string> = await client.getMap(mapName);
  let trips = 0;
  const call = <T>(p: Promise<T>) => (trips++, p);
  return {
    async acquire(key, durationMs) {
      if (!(await call(map.tryLock(key, 2000, 5000)))) return false;
      try {
        const raw = await call(map.get(key));
        const current = raw ? (JSON.parse(raw) as { holder: string; expiresAt: number }) : null;
        const now = Date.now();
        if (current && current.holder !== name && current.expiresAt > now) return false;
        await call(map.set(key, JSON.stringify({ holder: name, expiresAt: now + durationMs })));
        return true;
      } finally {
        await call(map.unlock(key));
      }
    },
    async release(key, lockAtLeastForMs = 0) {
      await call(map.lock(key));
      try {
        const raw = await call(map.get(key));
        const current = raw ? (JSON.parse(raw) as { holder: string; expiresAt: number }) : null;
        if (current?.holder === name) {
          const keepUntil = Date.now() + lockAtLeastForMs;
          if (lockAtLeastForMs > 0) await call(map.set(key, JSON.stringify({ holder: name, expiresAt: Math.min(current.expiresAt, keepUntil) })));
          else await call(map.delete(key));
        }
      } finally {
        await call(map.unlock(key));
      }
    },
    roundTrips: () => trips,
    close: () => client.shutdown(),
  };
}

/** What a Nest user would otherwise pick: a redlock-style Redis lock per tick (one Redis, no retries). */
export async function redlockNode(port: number): Promise<BenchNode> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const redlock = new Redlock([redis], { retryCount: 0, driftFactor: 0.01 });
  const locks = new Map<string, Awaited<ReturnType<Redlock['acquire']>>>();
  let trips = 0;
  return {
    async acquire(key, durationMs) {
      trips++;
      const existing = locks.get(key);
      try {
        // A holder extends its own lock (one script call); everyone else tries to take it (one script call).
        locks.set(key, existing ? await existing.extend(durationMs) : await redlock.acquire([`lock:${key}`], durationMs));
        return true;
      } catch {
        locks.delete(key);
        return false;
      }
    },
    async release(key, lockAtLeastForMs = 0) {
      const lock = locks.get(key);
      locks.delete(key);
      if (!lock) return;
      trips++;
      // lockAtLeastFor in Redis terms: shorten the TTL instead of deleting.
      if (lockAtLeastForMs > 0) await lock.extend(Math.max(1, lockAtLeastForMs)).catch(() => undefined);
      else await lock.release().catch(() => undefined);
    },
    roundTrips: () => trips,
    close: async () => {
      redis.disconnect();
    },
  };
}

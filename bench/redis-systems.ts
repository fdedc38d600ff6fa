/*
 * The Redis side of the bench's `redis` group: the gatekeeper on a RedisBackend (the bench's own Redis, shared with
 * the redlock and BullMQ baselines), a fresh key prefix declared new before any node uses it, and switching the
 * server's append-only file on and off for the one row of ours measured with persistence on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { RedisBackend } from '../lib/backends/redis/redis-backend';
import { systemClock } from '../lib/core/clock';
import { PermitRecordStore } from '../lib/permits/permit-record.store';
import { SemaphoreAdmin } from '../lib/permits/semaphore-admin';
import { validateDefinition } from '../lib/permits/definition.validator';
import { engineNode, type BenchNode } from './bench-systems';

/** The URL of the bench's Redis on `port`. */
export const redisUrlOf = (port: number) => `redis://127.0.0.1:${port}`;

/**
 * Ours on Redis: the decorator's decisions (a PermitEngine) on a PermitRecordStore over a RedisBackend of its own (its
 * client, its subscriber connection), as the module builds one per node. The bench's Redis keeps no append-only file
 * by default: the backend's warning about it is silenced here (the docs say persistence is off in the bench).
 */
export async function gatekeeperRedisNode(name: string, url: string, mapPrefix: string, local = true): Promise<BenchNode & { store: PermitRecordStore }> {
  const store = new PermitRecordStore(new RedisBackend({ url, mapPrefix, onWarning: () => undefined }));
  await store.connect({ clock: systemClock });
  return { ...engineNode(name, store, local), store };
}

/**
 * Declares `mapPrefix` new on the bench's Redis (nothing was ever granted under it), so its first permits are not
 * taken for ones a lost store forgot (a recovery wait), then defines `names` as semaphores (`hold` durations for the
 * names `isHold` picks, else `release`).
 */
export async function prepareRedisPrefix(url: string, mapPrefix: string, names: readonly string[], isHold: (name: string) => boolean): Promise<void> {
  if (!(await new RedisBackend({ url, mapPrefix }).declareFresh())) throw new Error(`redis bench: the prefix ${mapPrefix} was in use already`);
  const admin = await gatekeeperRedisNode('admin', url, mapPrefix, false);
  try {
    const definitions = new SemaphoreAdmin(admin.store, systemClock);
    for (const name of names) await definitions.define(validateDefinition({ name, duration: isHold(name) ? '10s' : '5s' }));
  } finally {
    await admin.close();
  }
}

/** Runs `commands` on a short-lived connection to the bench's Redis. */
async function withRedis<T>(port: number, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** `INFO commandstats` of the bench's Redis. */
export function redisInfo(port: number): Promise<string> {
  return withRedis(port, (redis) => redis.info('commandstats'));
}

/** Empties the bench's Redis (every system's keys), for a row that starts from nothing. */
export function flushRedis(port: number): Promise<unknown> {
  return withRedis(port, (redis) => redis.flushall());
}

/**
 * Turns the append-only file on (`appendfsync everysec`, Redis's default: one fsync a second in a background thread)
 * or off, and waits for the rewrite that turning it on starts. The server runs in a directory of its own (see
 * startRedis in bench/run.ts), so the file lands there.
 */
export async function setAppendOnly(port: number, on: boolean): Promise<void> {
  await withRedis(port, async (redis) => {
    await redis.config('SET', 'appendfsync', 'everysec');
    await redis.config('SET', 'appendonly', on ? 'yes' : 'no');
    for (let i = 0; i < 600; i++) {
      const info = await redis.info('persistence');
      const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
      if (field('aof_enabled') === (on ? '1' : '0') && field('aof_rewrite_in_progress') === '0' && field('aof_rewrite_scheduled') === '0') return;
      await sleep(50);
    }
    throw new Error(`redis bench: appendonly ${on ? 'yes' : 'no'} did not settle within 30 s`);
  });
}

/** Counts every command this process's ioredis connections send from now until `stop()` (a Lua script is one). */
export function countBenchRedisCommands(): { readonly sent: number; stop(): void } {
  const counter = { sent: 0, stop: () => undefined as void };
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof send>) {
    counter.sent++;
    return send.apply(this, args);
  };
  counter.stop = () => {
    Redis.prototype.sendCommand = send;
  };
  return counter;
}

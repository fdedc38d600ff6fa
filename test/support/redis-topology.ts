import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { eventually } from './eventually';
import { freePort } from './free-port';

/** One `redis-server` process of a test's own (a cluster node or a Sentinel), in a folder of its own. */
export class RedisProcess {
  private constructor(readonly port: number, private readonly child: ChildProcess, private readonly dir: string) {}

  /**
   * Starts `redis-server` with `args` (a config file first, if any, written from `config`) and waits for PING. A free
   * port can be taken by another process of the run before the server binds it (and a cluster node binds its bus port,
   * the port + 10000, too): a server that exits before it answers is started again on another port, up to three times.
   */
  static async start(args: (port: number, dir: string) => string[], config?: (port: number, dir: string) => string): Promise<RedisProcess> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'gatekeeper-redis-topology-'));
      const file = join(dir, 'redis.conf');
      if (config) writeFileSync(file, config(port, dir));
      const child = spawn('redis-server', [...(config ? [file] : []), ...args(port, dir)], { stdio: 'ignore' });
      const started = new RedisProcess(port, child, dir);
      const outcome = await eventually(`redis-server on port ${port} to answer`, async () => {
        if (child.exitCode !== null || child.signalCode !== null) return 'exited' as const;
        const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on('error', () => undefined);
        try {
          await client.connect();
          return (await client.ping()) === 'PONG' ? ('answered' as const) : undefined;
        } catch {
          return undefined;
        } finally {
          client.disconnect();
        }
      }, { timeoutMs: 10_000, intervalMs: 50 });
      if (outcome === 'answered') return started;
      await started.stop();
      if (attempt === 3) throw new Error(`redis-server exited before it answered, on three ports in turn (the last ${port}, code ${child.exitCode})`);
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = once(this.child, 'exit');
      this.child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A Redis Cluster of `masters` primaries (no replicas), its slots spread by `redis-cli --cluster create`. */
export class TestRedisCluster {
  private constructor(private readonly nodes: RedisProcess[]) {}

  static async start(masters = 3): Promise<TestRedisCluster> {
    const started = await Promise.allSettled(Array.from({ length: masters }, () => RedisProcess.start((port, dir) => [
      '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'),
      '--dir', dir, '--save', '', '--appendonly', 'no',
    ])));
    const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      // The nodes that did start are not left running past the test.
      await Promise.all(nodes.map((n) => n.stop()));
      throw failed.reason;
    }
    const cluster = new TestRedisCluster(nodes);
    try {
      execFileSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'ignore' });
      await eventually('the cluster to be ok on every node', async () => {
        for (const node of nodes) {
          const client = new Redis({ port: node.port, host: '127.0.0.1', lazyConnect: true });
          try {
            await client.connect();
            if (!/cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO')))) return false;
          } finally {
            client.disconnect();
          }
        }
        return true;
      }, { timeoutMs: 20_000, intervalMs: 100 });
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The nodes' addresses, for `new Redis.Cluster(...)`. */
  get startupNodes(): Array<{ host: string; port: number }> {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}

/** One Sentinel watching a primary as `name`, deciding alone (quorum 1), so a test can fail the primary over. */
export class TestRedisSentinel {
  private constructor(private readonly process: RedisProcess, readonly name: string) {}

  static async start(primaryPort: number, name = 'gatekeeper-primary'): Promise<TestRedisSentinel> {
    const sentinel = await RedisProcess.start(() => ['--sentinel'], (port, dir) => [
      `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 10000`,
    ].join('\n') + '\n');
    return new TestRedisSentinel(sentinel, name);
  }

  /** The Sentinel's address, for ioredis's `sentinels` option. */
  get address(): { host: string; port: number } {
    return { host: '127.0.0.1', port: this.process.port };
  }

  /** Runs `use` on a client of the Sentinel itself. */
  async withClient<T>(use: (client: Redis) => Promise<T>): Promise<T> {
    const client = new Redis({ ...this.address, lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      return await use(client);
    } finally {
      client.disconnect();
    }
  }

  /** The port of the primary the Sentinel names now. */
  primaryPort(): Promise<number> {
    return this.withClient(async (client) => Number(((await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name)) as string[])[1]));
  }

  /** Fails the primary over to a replica (`SENTINEL FAILOVER`) and resolves once the Sentinel names the new one. */
  async failover(): Promise<number> {
    const before = await this.primaryPort();
    // The Sentinel must know the replica, connected and following, before it will promote it (it learns of it from
    // the primary's INFO, then connects to it): until then FAILOVER answers NOGOODSLAVE.
    await eventually('the Sentinel to know a replica in good standing', () => this.withClient(async (client) => {
      const replicas = (await client.call('SENTINEL', 'REPLICAS', this.name)) as string[][];
      return replicas.some((fields) => {
        const field = (name: string) => fields[fields.indexOf(name) + 1];
        return field('flags') === 'slave' && field('master-link-status') === 'ok';
      });
    }), { timeoutMs: 30_000, intervalMs: 200 });
    await eventually('the Sentinel to start a failover', () => this.withClient(async (client) => {
      try {
        await client.call('SENTINEL', 'FAILOVER', this.name);
        return true;
      } catch (error) {
        if (/NOGOODSLAVE/.test((error as Error).message)) return false; // its view of the replica is not fresh yet
        throw error;
      }
    }), { timeoutMs: 30_000, intervalMs: 500 });
    return eventually('the Sentinel to name a new primary', async () => {
      const now = await this.primaryPort();
      return now !== before ? now : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
  }

  async stop(): Promise<void> {
    await this.process.stop();
  }
}

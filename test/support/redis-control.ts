import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Redis from 'ioredis';
import { eventually } from './eventually';

interface Answer {
  ok: boolean;
  cmd?: string;
  error?: string;
  url?: string;
  dir?: string;
}

export interface ControlledRedisOptions {
  /** An AOF fsynced every second (the default): a SIGKILL loses no acknowledged write. `false`: a kill loses everything. */
  appendonly?: boolean;
  /** Redis's RDB snapshot schedule (`'3600 1 300 100'`); none by default. */
  save?: string;
}

/**
 * A Redis server of a test's own, to fault: `scripts/redis.mjs start --control` in a child process, which kills
 * (SIGKILL, a crash), freezes (SIGSTOP) and starts the server on command, always on the same port and folder: with
 * `appendonly` (the default) every acknowledged write comes back after a kill, as on a real crash of the process.
 */
export class ControlledRedis {
  private readonly waiters: Array<(answer: Answer) => void> = [];
  url = '';
  /** The server's working folder (its AOF, RDB and log); deleted by {@link stop}. */
  dir = '';

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.waiters.shift()?.(JSON.parse(line) as Answer));
    child.once('exit', (code, signal) => {
      for (const waiter of this.waiters.splice(0)) waiter({ ok: false, error: `redis control exited (${signal ?? code})` });
    });
  }

  /** The port the server listens on (127.0.0.1). */
  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Starts a server on a free port, in a new temporary folder, and resolves once it answers PING. */
  static start(options: ControlledRedisOptions = {}): Promise<ControlledRedis> {
    return ControlledRedis.spawn(options, []);
  }

  /**
   * Starts a replica of `of` (`replicaof 127.0.0.1 <port>`) on a port and folder of its own, and resolves once its
   * link to the primary is up and the first sync is done. {@link promote} makes it a primary, for a failover.
   */
  static async startReplica(of: ControlledRedis | number, options: ControlledRedisOptions = {}): Promise<ControlledRedis> {
    const primaryPort = typeof of === 'number' ? of : of.port;
    const replica = await ControlledRedis.spawn(options, ['--replica-of', String(primaryPort)]);
    try {
      await replica.withClient((client) => eventually(`replica of port ${primaryPort} in sync`, async () => {
        const info = await client.info('replication');
        return /master_link_status:up/.test(info) && /master_sync_in_progress:0/.test(info);
      }, { timeoutMs: 30_000 }));
    } catch (error) {
      await replica.stop();
      throw error;
    }
    return replica;
  }

  private static async spawn(options: ControlledRedisOptions, extra: string[]): Promise<ControlledRedis> {
    const args = [join(__dirname, '../../scripts/redis.mjs'), 'start', '--control', ...extra];
    if (options.appendonly === false) args.push('--no-appendonly');
    if (options.save !== undefined) args.push('--save', options.save);
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const server = new ControlledRedis(child);
    const started = await server.next();
    if (!started.ok) throw new Error(`Redis did not start: ${started.error}`);
    server.url = started.url!;
    server.dir = started.dir!;
    return server;
  }

  /** SIGKILLs the server (a crash) and resolves once it is gone. */
  kill(): Promise<void> {
    return this.command('kill');
  }

  /** Starts it again on the same port and folder (its AOF replayed) and resolves once it answers PING. */
  restart(): Promise<void> {
    return this.command('start');
  }

  /** Stops it as an administrator would (SIGTERM: the AOF flushed, a snapshot saved if `save` is set); {@link restart} brings it back. */
  shutdown(): Promise<void> {
    return this.command('shutdown');
  }

  /** SIGSTOPs the server: connections stay open and nothing answers (a stalled machine). */
  freeze(): Promise<void> {
    return this.command('freeze');
  }

  /** SIGCONTs what {@link freeze} stopped. */
  resume(): Promise<void> {
    return this.command('resume');
  }

  /**
   * Makes this replica a primary (`REPLICAOF NO ONE`, then `CONFIG REWRITE` so a {@link restart} keeps it one), with
   * whatever it had not received from its old primary lost.
   */
  promote(): Promise<void> {
    return this.withClient(async (client) => {
      await client.call('REPLICAOF', 'NO', 'ONE');
      await client.call('CONFIG', 'REWRITE');
    });
  }

  /** Runs `use` on a plain client of this server, closed after. */
  async withClient<T>(use: (client: Redis) => Promise<T>): Promise<T> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, disconnectTimeout: 50 });
    await client.connect();
    try {
      return await use(client);
    } finally {
      client.disconnect();
    }
  }

  /** Stops it and deletes its folder. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin!.end('stop\n');
    await exited;
  }

  private async command(cmd: string): Promise<void> {
    const answered = this.next();
    this.child.stdin!.write(`${cmd}\n`);
    const answer = await answered;
    if (!answer.ok) throw new Error(`redis ${cmd} failed: ${answer.error}`);
  }

  private next(): Promise<Answer> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

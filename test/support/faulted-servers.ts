import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import type { StoreBackend } from '../../lib/store/store-backend';
import { ControlledPostgres } from './postgres-control';
import { ControlledRedis } from './redis-control';

/** What the node processes of a scene are told to connect to (`startWorkloadNode`'s `cluster`). */
export type ServerTarget = { readonly postgresUrl: string } | { readonly redisUrl: string };

/** A store server of a test's own, under the faults every server suffers alike. */
export interface FaultedServer {
  readonly url: string;
  readonly port: number;
  /** What a workload node is told to connect to. */
  readonly target: ServerTarget;
  /** SIGKILLs the server (a crash). */
  kill(): Promise<void>;
  /** Starts it again after {@link kill}, on the same data as a real crash leaves (its AOF, if any). */
  restart(): Promise<void>;
  /** SIGSTOPs it: connections stay open, nothing answers. */
  freeze(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
  /** A backend of the contract on this server, for an operator's store or a fresh prefix's declaration. */
  backend(mapPrefix: string): StoreBackend;
  /** Gets a prefix ready for a scene's first node (Redis counts a first use of a prefix not declared new as a loss). */
  prepare(mapPrefix: string): Promise<void>;
  /** Ends the change feed of the node process named `node` (its LISTEN connection, its subscriber); resolves once done. */
  endFeed(node: string): Promise<void>;
  /**
   * Makes the node's change feed deaf without closing it, where the server can (a PostgreSQL backend process is
   * SIGSTOPped); returns how to undo it, or `undefined` where the server has no such fault.
   */
  deafenFeed?(node: string): Promise<() => void>;
}

/** A kind of server the suite runs on, and what it promises across a crash. */
export interface ServerKind {
  /** As test names say it. */
  readonly name: string;
  /** For history file names. */
  readonly short: string;
  /**
   * Whether a restart counts as a loss of data: the store may have dropped acknowledged writes (Redis: an AOF fsynced
   * every second, or none), so grants wait out every permit granted before, and tokens start above the loss.
   * PostgreSQL loses no acknowledged write across a crash, so the holder may take its own permit up again.
   */
  readonly restartIsRecovery: boolean;
  /** How often a node checks that its feed still hears (the backend's `listenCheckMs` default). */
  readonly feedCheckMs: number;
  /** Whether its servers can make a feed deaf ({@link FaultedServer.deafenFeed}). */
  readonly deafensFeeds: boolean;
  start(): Promise<FaultedServer>;
}

const postgres: ServerKind = {
  name: 'PostgreSQL', short: 'pg', restartIsRecovery: false, feedCheckMs: 5_000, deafensFeeds: true,
  async start() {
    const server = await ControlledPostgres.start();
    const listener = async (node: string) => {
      const [pid] = await server.backends(node, "query ilike 'LISTEN %'");
      if (pid === undefined) throw new Error(`no LISTEN connection of ${node} found`);
      return pid;
    };
    return {
      url: server.url, port: server.port, target: { postgresUrl: server.url },
      kill: () => server.kill(), restart: () => server.startAgain(), freeze: () => server.freeze(), resume: () => server.resume(),
      stop: () => server.quit(),
      backend: (mapPrefix) => new PostgresBackend({ connectionString: server.url, mapPrefix }),
      prepare: async () => undefined,
      async endFeed(node) {
        if (!(await server.terminate(await listener(node)))) throw new Error(`the LISTEN connection of ${node} was not ended`);
      },
      async deafenFeed(node) {
        const pid = await listener(node);
        process.kill(pid, 'SIGSTOP');
        return () => process.kill(pid, 'SIGCONT');
      },
    };
  },
};

function redis(appendonly: boolean): ServerKind {
  return {
    name: `Redis ${appendonly ? 'with its AOF' : 'without persistence'}`, short: appendonly ? 'redis-aof' : 'redis-none',
    restartIsRecovery: true, feedCheckMs: 5_000, deafensFeeds: false,
    async start() {
      const server = await ControlledRedis.start({ appendonly });
      const backend = (mapPrefix: string) => new RedisBackend({ url: server.url, mapPrefix, onWarning: () => undefined });
      return {
        url: server.url, port: server.port, target: { redisUrl: server.url },
        kill: () => server.kill(), restart: () => server.restart(), freeze: () => server.freeze(), resume: () => server.resume(),
        stop: () => server.stop(),
        backend,
        async prepare(mapPrefix) {
          if (!(await backend(mapPrefix).declareFresh())) throw new Error(`prefix ${mapPrefix} was not declared new`);
        },
        async endFeed(node) {
          // The node's subscriber: its connection named by the node, in subscriber mode.
          const killed = await server.withClient(async (client) => {
            const list = String(await client.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
            const ids = list.split('\n').filter((line) => new RegExp(`\\bname=${node}\\b`).test(line)).map((line) => /\bid=(\d+)/.exec(line)![1]);
            for (const id of ids) await client.call('CLIENT', 'KILL', 'ID', id);
            return ids.length;
          });
          if (killed !== 1) throw new Error(`${killed} subscribers of ${node} found, not one`);
        },
      };
    },
  };
}

/** Every server the fault suites run on: PostgreSQL, and Redis with and without its append-only file. */
export const SERVER_KINDS: readonly ServerKind[] = [postgres, redis(true), redis(false)];

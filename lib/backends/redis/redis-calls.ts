import { randomUUID } from 'node:crypto';
import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { withDeadline } from '../../core/with-deadline';
import { storeAnswered } from '../../store/unknown-outcome';
import type { RedisClient, RedisLossCause } from './redis-backend.options';
import type { IncarnationAnswer, RedisIncarnation } from './redis-incarnation';
import { luaOf, type Script } from './redis-script-prelude';
import { SCRIPTS, type ScriptName } from './redis-scripts';

/** Errors of a command that was never sent: no connection to send it on. */
const NOT_SENT = /enableOfflineQueue|Stream isn't writeable|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|Connection is closed.*before|not connected/i;

/** One script's answer: its own result and what it says of the store. */
export interface ScriptAnswer<R> extends IncarnationAnswer {
  readonly result: R;
}

/**
 * Every call the Redis backend makes: one of its scripts (`EVALSHA`, loaded once per connection), with the caller's
 * deadline (the backend's call timeout by default), counted, its answer's incarnation checked, and failures mapped
 * fail-closed: never sent is `StoreUnavailableError`, sent without an answer `StoreTimeoutError` (its outcome unknown;
 * a late answer goes to `lateOutcome`).
 */
export class RedisCalls {
  private count = 0;
  /** Calls sent so far: with {@link mark}, each call's own id (see {@link send}). */
  private sent = 0;
  /** This process's mark, so that call ids are unique across processes. */
  private readonly mark = randomUUID();
  private unreachable = false;
  private readonly defined = new WeakSet<RedisClient>();
  /** Scripts not in `SCRIPTS` (a native store's own) defined so far, per client, by name. */
  private readonly definedExtra = new WeakMap<RedisClient, Set<string>>();

  constructor(
    private readonly client: () => RedisClient,
    /** The key prefix's hash tag (`{gatekeeper}`): every script's KEYS[1]. */
    private readonly tag: string,
    private readonly timeoutMs: number,
    private readonly incarnation: RedisIncarnation,
    /** Replicas a write must reach (`WAIT`) before it counts as done; 0: none. */
    private readonly minReplicas = 0,
    /** The server's address without its password, as failures name it (`127.0.0.1:6379`). */
    private readonly address = 'its address',
  ) {}

  /**
   * Runs script `name` (one of `SCRIPTS`, or a script of a native store's own, with the same prelude) with its own
   * arguments; resolves with its answer once the incarnation in it was taken in.
   */
  run<R>(name: ScriptName | Script, args: readonly (string | number)[], what: string, timeoutMs?: number, lateOutcome?: (answer: ScriptAnswer<R> | undefined) => void): Promise<ScriptAnswer<R>> {
    this.count++;
    return this.send(name, args, what, timeoutMs, lateOutcome);
  }

  /**
   * The change feed's check of itself (every `listenCheckMs`): publishes `payload` on the changes channel from a
   * script, so that every node runs the prelude's checks (a loss of data, leases removed by another client) at least
   * that often, however quiet it is. Answers the server's clock (epoch ms, as `TIME` read in the script). Not counted
   * among the calls: it serves no decision.
   */
  async probe(payload: string, timeoutMs: number): Promise<number> {
    const { result } = await this.send<number>('probe', [payload], 'check the Redis subscriber', timeoutMs);
    return Number(result);
  }

  private async send<R>(name: ScriptName | Script, args: readonly (string | number)[], what: string, timeoutMs?: number, lateOutcome?: (answer: ScriptAnswer<R> | undefined) => void): Promise<ScriptAnswer<R>> {
    let sent: Promise<ScriptAnswer<R>>;
    try {
      const client = this.client();
      this.define(client);
      const script = typeof name === 'string' ? SCRIPTS[name] : this.defineExtra(client, name);
      const command = (client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[script.name];
      // The call's own id: the incarnation a store found empty takes (ARGV[3]); unique per call, made without a UUID each time.
      const argv = [this.tag, ...this.incarnation.argv(), `${this.mark}.${(this.sent++).toString(36)}`, ...args];
      sent = command.apply(client, argv).then((raw) => this.decode<R>(raw, what));
    } catch (error) {
      throw this.failure(error, what);
    }
    const script = typeof name === 'string' ? SCRIPTS[name] : name;
    try {
      const started = performance.now();
      const answer = await withDeadline(sent, timeoutMs ?? this.timeoutMs, what);
      this.unreachable = false;
      this.incarnation.observe(answer);
      if (this.minReplicas > 0 && script.writes) await this.replicated(what, Math.max(1, (timeoutMs ?? this.timeoutMs) - (performance.now() - started)));
      return answer;
    } catch (error) {
      const failure = this.failure(error, what);
      if (failure instanceof StoreTimeoutError && lateOutcome) {
        if (error instanceof StoreTimeoutError) {
          void sent.then((late) => {
            this.incarnation.observe(late);
            lateOutcome(late);
          }, () => lateOutcome(undefined));
        } else {
          lateOutcome(undefined);
        }
      }
      throw failure;
    }
  }

  /**
   * Waits, within what is left of the call's deadline, until `minReplicas` replicas have every write this connection
   * made (`WAIT`): an acknowledged grant then survives a failover to one of them. Fewer in time fails the call with
   * `StoreUnavailableError`, and its caller acts as if it had not written (the write stays on the primary: a permit it
   * holds unused until it expires, a claim that lapses), never on a write a failover could take back.
   */
  private async replicated(what: string, waitMs: number): Promise<void> {
    this.count++;
    const acked = Number(await withDeadline(this.client().call('WAIT', this.minReplicas, Math.ceil(waitMs)), waitMs + 1_000, `${what}: wait for replicas`));
    if (acked < this.minReplicas) {
      throw new StoreUnavailableError(`Redis call (${what}) reached ${acked} of the ${this.minReplicas} replicas minReplicas asks for within its deadline: not counted as done, since a failover could lose it`);
    }
  }

  /** Commands sent so far. */
  operations(): number {
    return this.count;
  }

  /** Whether the last call reached the server (or none was made yet). */
  reachable(): boolean {
    return !this.unreachable;
  }

  /** Defines the scripts as commands on `client`, once. */
  private define(client: RedisClient): void {
    if (this.defined.has(client)) return;
    for (const script of Object.values(SCRIPTS)) client.defineCommand(script.name, { numberOfKeys: 1, lua: luaOf(script) });
    this.defined.add(client);
  }

  /** Defines a script not in `SCRIPTS` as a command on `client`, once. */
  private defineExtra(client: RedisClient, script: Script): Script {
    let names = this.definedExtra.get(client);
    if (!names) this.definedExtra.set(client, (names = new Set()));
    if (!names.has(script.name)) {
      client.defineCommand(script.name, { numberOfKeys: 1, lua: luaOf(script) });
      names.add(script.name);
    }
    return script;
  }

  private decode<R>(raw: unknown, what: string): ScriptAnswer<R> {
    if (!Array.isArray(raw) || raw.length !== 6 || typeof raw[1] !== 'string') throw new CorruptStateError(what, `unexpected answer from Redis: ${JSON.stringify(raw)}`);
    const [result, incarnation, epoch, lostAt, forgotten, why] = raw as [R, string, number | string, string | null, string[] | null, string | null];
    return {
      result, incarnation, epoch: Number(epoch), lostAt: lostAt === null ? undefined : Number(lostAt),
      found: typeof why === 'string' ? { why: why as RedisLossCause, forgotten: Array.isArray(forgotten) ? forgotten : [] } : undefined,
    };
  }

  private failure(error: unknown, what: string): Error {
    if (error instanceof StoreUnavailableError || error instanceof CorruptStateError) {
      if (error instanceof StoreTimeoutError) this.unreachable = true;
      return error;
    }
    const message = error instanceof Error ? error.message : String(error);
    // An error Redis itself answered (a script error, OOM, READONLY on a replica): it reached the server.
    const answered = /^(ERR|WRONGTYPE|OOM|READONLY|NOSCRIPT|BUSY|LOADING|MASTERDOWN|NOREPLICAS|CLUSTERDOWN|MOVED|ASK|TRYAGAIN|CROSSSLOT)\b/.test(message);
    if (!answered) this.unreachable = true;
    if (!answered && !NOT_SENT.test(message)) {
      return new StoreTimeoutError(`Redis call failed (${what}), its outcome unknown: ${message}`, { cause: error });
    }
    const failure = new StoreUnavailableError(`Redis call failed (${what}): ${answered ? message : plainly(message, this.address)}`, { cause: error });
    // Redis's own answer (OOM, READONLY, a script's error): known, never settled by reading back.
    return answered ? storeAnswered(failure) : failure;
  }
}

/**
 * What ioredis says of a call it did not send, in the words of an operator and naming the server: it refuses to queue
 * a call while disconnected (`Stream isn't writeable and enableOfflineQueue options is false`, `Connection is closed`),
 * which means the connection to Redis is down and being made again; a refused connection or an unknown host as such.
 * Anything else as it was said, with the address.
 */
function plainly(message: string, address: string): string {
  if (/enableOfflineQueue|Stream isn't writeable|Connection is closed|not connected/i.test(message)) return `not connected to Redis at ${address} (the connection is down; reconnecting), not sent`;
  const code = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b/.exec(message)?.[1];
  if (code === 'ECONNREFUSED') return `Redis at ${address} refused the connection (ECONNREFUSED), not sent`;
  if (code !== undefined) return `Redis at ${address} cannot be reached (${code}), not sent`;
  return `${message} (Redis at ${address})`;
}

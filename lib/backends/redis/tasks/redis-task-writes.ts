import { TurnBatches } from '../../../store/turn-batches';
import type { RedisCalls } from '../redis-calls';
import { TASK_SCRIPTS } from './redis-task-scripts';

/** What a write does (see `TASK_SCRIPTS.write`): create, replace, remove, replace the ends, check absent, put, delete. */
export type TaskWriteMode = 'c' | 'r' | 'd' | 'e' | 'a' | 'p' | 'x';

/** One compare-and-set of a task. */
interface Write {
  readonly mode: TaskWriteMode;
  readonly key: string;
  readonly expected: string;
  readonly next: string;
  /** What the scripts index `next` by (`taskIndexLine`); '' to have the script read it from `next` itself. */
  readonly line: string;
  readonly timeoutMs: number | undefined;
}

/** Where the writes go: the backend's calls and the tasks' record map. */
export interface RedisTaskTarget {
  readonly calls: RedisCalls;
  readonly map: string;
}

/**
 * The Redis task store's compare-and-sets, several in one script call: the writes asked for in one turn of the event
 * loop go out as one `gkTaskWrite` ({@link TurnBatches}), which compares each with the exact text its writer read and
 * keeps the indexes, as a single write does; one round trip for all of them. A script runs alone on the server, so no
 * write waits for another's lock.
 */
export class RedisTaskWrites {
  private readonly batches = new TurnBatches<Write>((writes, timeoutMs) => this.send(writes, timeoutMs));

  constructor(private readonly target: () => RedisTaskTarget) {}

  /**
   * Writes as `mode` says, comparing with `expected` where it compares; true if it landed. `line`: what `next` is
   * indexed by (see `taskIndexLine`), '' for a value the script is to read itself (one another writer stored).
   */
  write(mode: TaskWriteMode, key: string, expected: string | null, next: string | null, line: string, timeoutMs: number | undefined): Promise<boolean> {
    return this.batches.write({ mode, key, expected: expected ?? '', next: next ?? '', line, timeoutMs });
  }

  /**
   * Sends `call` once this turn's writes are in, with them (see `TurnBatches.alongside`): `call` gets their ARGV (the
   * count, then 5 each, as `TASK_SCRIPTS.write` takes them) and their deadline, and answers its own answer with
   * whether each landed.
   */
  alongside<A extends { readonly landed: readonly boolean[] }>(call: (args: string[], count: number, timeoutMs: number | undefined) => Promise<A>): Promise<A> {
    return this.batches.alongside((writes, timeoutMs) => call([String(writes.length), ...argsOf(writes)], writes.length, timeoutMs));
  }

  private async send(writes: readonly Write[], timeoutMs: number | undefined): Promise<boolean[]> {
    const { calls, map } = this.target();
    const args: string[] = [map, ...argsOf(writes)];
    const what = writes.length === 1 ? `write task "${writes[0].key}"` : `write ${writes.length} tasks`;
    const { result } = await calls.run<number[]>(TASK_SCRIPTS.write, args, what, timeoutMs);
    return writes.map((_, i) => result[i] === 1);
  }
}

/** The writes' ARGV, 5 each, as `TASK_SCRIPTS.write` takes them. */
function argsOf(writes: readonly Write[]): string[] {
  const args: string[] = [];
  for (const w of writes) args.push(w.mode, w.key, w.expected, w.next, w.line);
  return args;
}

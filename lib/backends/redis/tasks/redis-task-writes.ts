import type { RedisCalls } from '../redis-calls';
import { TASK_SCRIPTS } from './redis-task-scripts';

/** What a write does (see `TASK_SCRIPTS.write`): create, replace, remove, check absent, put, delete. */
export type TaskWriteMode = 'c' | 'r' | 'd' | 'a' | 'p' | 'x';

/** One compare-and-set waiting for its script call. */
interface Write {
  readonly mode: TaskWriteMode;
  readonly key: string;
  readonly expected: string;
  readonly next: string;
  readonly timeoutMs: number | undefined;
  resolve(landed: boolean): void;
  reject(error: unknown): void;
}

/** Writes of one script call at most. */
const MOST_PER_CALL = 256;

/** Where the writes go: the backend's calls and the tasks' record map. */
export interface RedisTaskTarget {
  readonly calls: RedisCalls;
  readonly map: string;
}

/**
 * The Redis task store's compare-and-sets, several in one script call: the writes asked for in one turn of the event
 * loop (a node's claims for its free slots, the completions of handlers that ended together, a burst of submits) go
 * out as one `gkTaskWrite`, which compares each with the exact text its writer read and keeps the indexes, as a single
 * write does; one round trip for all of them. A script runs alone on the server, so no write waits for another's lock.
 *
 * Each write lands or not on its own. A key is written at most once per call (a second write of it waits for the
 * next), so the script's answer tells every writer its own outcome. A call that fails fails each of its writes with
 * its error (a lost answer: each outcome unknown, as for a single write); its deadline is the shortest of its writes'.
 */
export class RedisTaskWrites {
  private queued: Write[] = [];
  private scheduled = false;

  constructor(private readonly target: () => RedisTaskTarget) {}

  /** Writes as `mode` says, comparing with `expected` where it compares; true if it landed. */
  write(mode: TaskWriteMode, key: string, expected: string | null, next: string | null, timeoutMs: number | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queued.push({ mode, key, expected: expected ?? '', next: next ?? '', timeoutMs, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends what was asked for: calls of at most one write per key; the rest go next turn. */
  private flush(): void {
    this.scheduled = false;
    const keys = new Set<string>();
    const now: Write[] = [];
    const later: Write[] = [];
    for (const write of this.queued) {
      if (keys.has(write.key)) later.push(write);
      else {
        keys.add(write.key);
        now.push(write);
      }
    }
    this.queued = later;
    if (later.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    let target: RedisTaskTarget;
    try {
      target = this.target();
    } catch (error) {
      for (const write of now) write.reject(error);
      return;
    }
    for (let i = 0; i < now.length; i += MOST_PER_CALL) void this.send(target, now.slice(i, i + MOST_PER_CALL));
  }

  private async send({ calls, map }: RedisTaskTarget, writes: Write[]): Promise<void> {
    const args: string[] = [map];
    for (const w of writes) args.push(w.mode, w.key, w.expected, w.next);
    const deadlines = writes.map((w) => w.timeoutMs).filter((ms): ms is number => ms !== undefined);
    const what = writes.length === 1 ? `write task "${writes[0].key}"` : `write ${writes.length} tasks`;
    try {
      const { result } = await calls.run<number[]>(TASK_SCRIPTS.write, args, what, deadlines.length > 0 ? Math.min(...deadlines) : undefined);
      writes.forEach((write, i) => write.resolve(result[i] === 1));
    } catch (error) {
      for (const write of writes) write.reject(error);
    }
  }
}

/*
 * A worker process of the tasks rows (bench/task-node.ts) as the bench sees it: its output read line by line as it
 * arrives, once, into maps of start and completion times and a list of round-trip reports. Waiting for work to
 * finish is done on those counts, re-checked when a line arrives, so the harness spends the same small, constant
 * amount per task whatever system it measures (it used to re-read every worker's whole output every 50 ms).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { tsScriptArgs } from '../test/support/ts-script';

const NODE_SCRIPT = join(__dirname, 'task-node.ts');
/** Loading Nest, BullMQ and the library on a machine shared with other work can take a while. */
const START_TIMEOUT_MS = 180_000;

export class WorkerNode {
  /** When each task's handler started / returned (unix ms, fractional), by id. */
  readonly started = new Map<string, number>();
  readonly completed = new Map<string, number>();
  private readonly ops: number[] = [];
  /** The `pg` query counts the PostgreSQL systems report beside their round trips, in report order. */
  private readonly queries: number[] = [];
  /** The heap bytes allocated, per `operations()` report (`HEAP` lines). */
  private readonly heap: number[] = [];
  private readonly listeners = new Set<() => void>();
  private rest = '';
  private ready = false;
  private errors = '';

  constructor(readonly name: string, readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk) => this.read(String(chunk)));
    // Kept for the message if the process fails to start (bounded: a crash loop must not fill the bench's memory).
    child.stderr?.on('data', (chunk) => (this.errors = (this.errors + String(chunk)).slice(-4_000)));
    // An exit wakes the waits too ('close': after the last output was read), so a dead node fails them at once.
    child.on('close', () => {
      for (const listener of this.listeners) listener();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Resolves once the process printed READY; fails if it exits first or takes longer than START_TIMEOUT_MS. */
  async untilReady(): Promise<void> {
    await waitFor([this], `${this.name} to print READY`, () => {
      if (!this.ready && this.exited()) throw new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before READY: ${this.errors}`);
      return this.ready;
    }, START_TIMEOUT_MS).catch((error: Error) => {
      throw error.message.includes('before READY') ? error : new Error(`${error.message} (stderr: ${this.errors || 'none'})`);
    });
  }

  /** SIGTERM, and wait for the exit. */
  async stop(): Promise<void> {
    if (this.exited()) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }

  /** Asks for the process's round-trip counter (SIGUSR2; it prints `OPS <ms> <n>`) and waits for the answer. */
  async operations(): Promise<number> {
    const before = this.ops.length;
    this.child.kill('SIGUSR2');
    await waitFor([this], `${this.name} to report its operation count`, () => this.ops.length > before, 10_000);
    return this.ops.at(-1)!;
  }

  /** The bytes the process had allocated on V8's heap at the last `operations()` report (NaN before one). */
  lastHeapBytes(): number {
    return this.heap.at(-1) ?? NaN;
  }

  /** The `pg` queries the last `operations()` report gave (NaN when the process reports none). */
  lastQueries(): number {
    return this.queries.at(-1) ?? NaN;
  }

  /** Called on every line read, until the returned function is called. */
  onLine(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private read(chunk: string): void {
    const lines = (this.rest + chunk).split('\n');
    this.rest = lines.pop()!;
    for (const line of lines) {
      const [kind, a, b, c] = line.split(' ');
      if (kind === 'S') this.started.set(a, Number(b));
      else if (kind === 'C') this.completed.set(a, Number(b));
      else if (kind === 'HEAP') this.heap.push(Number(a));
      else if (kind === 'OPS') {
        this.ops.push(Number(b));
        this.queries.push(c === undefined ? NaN : Number(c));
      }
      else if (kind === 'READY') this.ready = true;
    }
    if (lines.length) for (const listener of this.listeners) listener();
  }
}

/** Resolves once `check` holds, re-checked whenever one of `nodes` prints a line; fails with `what` after `timeoutMs`. */
export function waitFor<T>(nodes: WorkerNode[], what: string, check: () => T | undefined | false, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = [];
    const done = () => {
      clearTimeout(timer);
      for (const off of offs) off();
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const test = () => {
      let value: T | undefined | false;
      try {
        value = check();
      } catch (error) {
        done();
        reject(error as Error);
        return;
      }
      if (value === undefined || value === false) return;
      done();
      resolve(value);
    };
    for (const node of nodes) offs.push(node.onLine(test));
    test();
  });
}

/** Waits until every id of `ids` completed (or started) on one of `nodes`, counting lines: the ids are looked up only once the count is reached. */
export function allSeen(nodes: WorkerNode[], kind: 'started' | 'completed', ids: string[], what: string, timeoutMs: number): Promise<true> {
  const count = () => nodes.reduce((sum, n) => sum + n[kind].size, 0);
  const missing = ids.filter((id) => !nodes.some((n) => n[kind].has(id))).length;
  const target = count() + missing;
  return waitFor(nodes, what, () => count() >= target && ids.every((id) => nodes.some((n) => n[kind].has(id))), timeoutMs);
}

/** Starts `count` worker processes of `system` and waits until each takes work; stops them all if one fails. */
export async function startNodes(system: string, count: number, env: NodeJS.ProcessEnv, label: string): Promise<WorkerNode[]> {
  const nodes = Array.from({ length: count }, (_, i) => {
    const name = `${label}-${i}`;
    const child = spawn(process.execPath, tsScriptArgs(NODE_SCRIPT), { env: { ...process.env, ...env, SYSTEM: system, NODE_NAME: name }, stdio: ['ignore', 'pipe', 'pipe'] });
    return new WorkerNode(name, child);
  });
  try {
    await Promise.all(nodes.map((n) => n.untilReady()));
  } catch (error) {
    await stopNodes(nodes);
    throw error;
  }
  return nodes;
}

export async function stopNodes(nodes: WorkerNode[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.stop()));
}

/** Wall-clock ms with sub-ms precision, comparable across processes (each one's time origin is on the wall clock). */
export const preciseNow = () => performance.timeOrigin + performance.now();

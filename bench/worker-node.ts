/*
 * A worker process of the tasks rows (bench/task-node.ts) as the bench sees it: its output read line by line as it
 * arrives, once, into maps of start and completion times and a list of round-trip reports. Waiting for work to
 * finish is done on those counts, re-checked when a line arrives, so the harness spends the same small, constant
 * amount per task whatever system it measures (it used to re-read every worker's whole output every 50 ms).
 */
import { join } from 'node:path';
import { startApp, type AppProcess } from '../test/support/app-process';

const NODE_SCRIPT = join(__dirname, 'task-node.ts');

export class WorkerNode {
  /** When each task's handler started / returned (unix ms, fractional), by id. */
  readonly started = new Map<string, number>();
  readonly completed = new Map<string, number>();
  private readonly ops: number[] = [];
  private readonly listeners = new Set<() => void>();
  private rest = '';

  constructor(readonly app: AppProcess) {
    app.child.stdout?.on('data', (chunk) => this.read(String(chunk)));
  }

  get pid(): number {
    return this.app.child.pid!;
  }

  exited(): boolean {
    return this.app.child.exitCode !== null || this.app.child.signalCode !== null;
  }

  /** Asks for the process's round-trip counter (SIGUSR2; it prints `OPS <ms> <n>`) and waits for the answer. */
  async operations(): Promise<number> {
    const before = this.ops.length;
    this.app.child.kill('SIGUSR2');
    await waitFor([this], `${this.app.name} to report its operation count`, () => this.ops.length > before, 10_000);
    return this.ops.at(-1)!;
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
      const [kind, a, b] = line.split(' ');
      if (kind === 'S') this.started.set(a, Number(b));
      else if (kind === 'C') this.completed.set(a, Number(b));
      else if (kind === 'OPS') this.ops.push(Number(b));
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
      const value = check();
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

export async function startNodes(system: string, count: number, env: NodeJS.ProcessEnv, label: string): Promise<WorkerNode[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => new WorkerNode(await startApp(NODE_SCRIPT, `${label}-${i}`, { ...env, SYSTEM: system }))));
}

export async function stopNodes(nodes: WorkerNode[]): Promise<void> {
  await Promise.all(nodes.map((n) => (n.exited() ? undefined : n.app.stop())));
}

/** Wall-clock ms with sub-ms precision, comparable across processes (each one's time origin is on the wall clock). */
export const preciseNow = () => performance.timeOrigin + performance.now();

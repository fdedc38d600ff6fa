import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskStore } from '../store/tasks/task-store';
import type { TaskWorker } from './task-worker';

/** What a {@link TaskConnection} needs besides its store. */
export interface TaskConnectionOptions {
  /** The tasks' clock, started once connected and before anything is claimed on it (where the store has a clock). */
  readonly clock: { start(): Promise<unknown> };
  /** Makes the worker, once the store is connected. */
  worker(): TaskWorker;
  /** A stored task that cannot be read (it is skipped). */
  onCorrupt(key: string, reason: string): void;
  /** Closing the store at stop failed. */
  onCloseFailed(error: unknown): void;
}

/**
 * This node's task store and the worker on it, connected on first use (a submit, the operators' tools, a start with
 * handlers): once, and again at the next use after a failed connect. Its stop gives up a connect still waiting for
 * the cluster rather than wait for it.
 */
export class TaskConnection {
  private connecting?: Promise<TaskWorker>;
  private connectedWorker?: TaskWorker;

  constructor(
    private readonly store: TaskStore,
    private readonly options: TaskConnectionOptions,
  ) {}

  /** The worker, once the store is connected. */
  get worker(): TaskWorker | undefined {
    return this.connectedWorker;
  }

  /** The worker, with the store connected (once; a failed connect is tried again on the next use). */
  connected(): Promise<TaskWorker> {
    this.connecting ??= (async () => {
      await this.store.connect({ corruptValue: (key, reason) => this.options.onCorrupt(key, reason) });
      await this.options.clock.start();
      this.connectedWorker = this.options.worker();
      return this.connectedWorker;
    })().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  /**
   * Stops claiming, lets running handlers finish for up to `drainMs`, hands the rest back, and closes the store.
   * Returns the tasks that were running when it stopped (none when nothing had connected).
   */
  async stop(drainMs: number): Promise<string[]> {
    if (!this.connecting) return [];
    const worker = await Promise.race([this.connecting.catch(() => undefined), sleep(drainMs, undefined, { ref: false })]);
    if (!worker) {
      await this.store.close().catch(() => undefined);
      return [];
    }
    const running = worker.runningTasks();
    await worker.stop(drainMs);
    await this.store.close().catch((error: unknown) => this.options.onCloseFailed(error));
    return running;
  }
}

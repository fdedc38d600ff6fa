import type { StoreBackend } from '../store/store-backend';
import { readMoveMarks, type StoreMoveMark } from '../store/store-moves';

/**
 * Holds a node's claims while its tasks' store says tasks are arriving there from another store (`store move` with
 * tasks, prepared and not finished): the old store's nodes still run their tasks, so a node here claiming an id
 * submitted on both stores (a trigger, a fixed id) would run it beside them. Submits still land; claiming starts once
 * `store move --finish` moved the old tasks over (a copy still pending here then gives way to the old one) and lifted
 * the mark. Read at start and then every `everyMs` while held, nothing once released.
 */
export class TaskMoveHold {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly backend: StoreBackend,
    private readonly everyMs: number,
    private readonly tell: {
      /** Told once, when the node starts held. */
      readonly held: (mark: StoreMoveMark) => void;
      /** Told when the mark could not be read (the node stays held and reads it again). */
      readonly failed: (error: unknown) => void;
    },
  ) {}

  /** Calls `release` once the store holds no arriving mark for tasks: at once, or after the move finished. */
  whenReleased(release: () => void): void {
    let told = false;
    const check = async (): Promise<void> => {
      if (this.stopped) return;
      try {
        const mark = (await readMoveMarks(this.backend)).find((m) => m.capability === 'tasks' && m.state === 'arriving');
        if (!mark) {
          if (!this.stopped) release();
          return;
        }
        if (!told) this.tell.held(mark);
        told = true;
      } catch (error) {
        this.tell.failed(error);
      }
      if (this.stopped) return;
      this.timer = setTimeout(() => void check(), this.everyMs);
      this.timer.unref();
    };
    void check();
  }

  /** Reads no more and releases nothing. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

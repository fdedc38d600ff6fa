import type { TaskGroups } from './task-groups';
import type { TaskWorkerOptions } from './task-worker.options';

/**
 * The rounds of a node's claim loop (`TaskClaims`, `TaskPulls`), which never overlap: a kick during one asks for
 * another right after it. It also keeps the scan's stragglers (see `TaskGroups`) due: the next round's call asks for
 * them ({@link ClaimRounds.takeScan}), or, when a round ends without taking them (every slot is taken), they are
 * looked for on their own.
 */
export class ClaimRounds {
  private running?: Promise<void>;
  private again = false;
  private scanDue = false;
  private started = false;
  private stopped = false;

  constructor(
    private readonly round: () => Promise<void>,
    /** A round failed. */
    private readonly failed: (error: unknown) => void,
    private readonly groups: TaskGroups,
    /** The types the node claims (those it has handlers for). */
    private readonly types: () => string[],
    private readonly options: Pick<TaskWorkerOptions, 'onError'>,
  ) {}

  /** Starts the rounds: a first one now. */
  start(): void {
    this.started = true;
    this.kick();
  }

  /** Whether the node is stopping (no round starts then). */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Starts no more rounds; resolves once the round under way (if any) ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Runs a round now, or right after the one under way (nothing before the start or once stopping). */
  kick(): void {
    if (!this.started || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((error) => this.failed(error))
      .finally(() => {
        this.running = undefined;
        if (this.scanDue && !this.stopped) {
          this.scanDue = false;
          void this.groups.countStragglers(this.types()).catch((error) => this.options.onError?.(error, 'group count'));
        }
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** The scan came round: its stragglers are due. */
  scanned(): void {
    this.scanDue = true;
  }

  /** Whether the scan's stragglers are due (a round's call then asks for them). */
  get scanPending(): boolean {
    return this.scanDue;
  }

  /** Takes the scan's stragglers for this round's call: true if they were due. */
  takeScan(): boolean {
    const due = this.scanDue;
    this.scanDue = false;
    return due;
  }
}

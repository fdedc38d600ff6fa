/**
 * What started a run: its cron tick, an operator's "run now", a missed instant caught up, or a call of a
 * `@LeaderOnly` method on the leader (its own scheduling decorator's tick, or a direct call).
 */
export type RunTrigger = 'schedule' | 'manual' | 'catchUp' | 'call';

/**
 * How a run ended, or `running`:
 * - `completed`: the method returned;
 * - `failed`: it threw (the message is kept);
 * - `aborted`: its permit (for a `@LeaderOnly` method: its leadership) was lost while it ran and it stopped at the signal;
 * - `stopped`: `maxRunTime` was reached and it stopped at the signal;
 * - `replaced`: the next tick replaced it (`overlap: 'replace'`) and it stopped at the signal: not a failure;
 * - `unknown`: shown for a run still `running` in the history after a later holder took over (its node stopped,
 *   crashed or was cut off before it could say how the run ended); never written.
 */
export type JobRunOutcome = 'running' | 'completed' | 'failed' | 'aborted' | 'stopped' | 'replaced' | 'unknown';

/** One run of a job, as the cluster's history keeps it. */
export interface RunRecord {
  /** Unique per run: the instance, the fencing token, the start and the instance's count of runs. */
  readonly id: string;
  /** The job's name (`Class.method`, a runtime schedule's id, or `leader:<election>:<Class.method>`). */
  readonly job: string;
  /** What started it. */
  readonly trigger: RunTrigger;
  /** The scheduled instant the run is for (UTC epoch ms); absent for a job without a cron schedule. */
  readonly instant?: number;
  /** The acquirer name of the node that ran it. */
  readonly node: string;
  /** The id of the instance (process) that ran it. */
  readonly instance: string;
  /** The fencing token of the permit it ran under (for a `@LeaderOnly` method: the leadership's epoch). */
  readonly token: number;
  /** When it started (epoch ms, the running node's clock). */
  readonly startedAt: number;
  /** How long it ran, once it ended. */
  readonly durationMs?: number;
  /** How it ended, or `running`. */
  readonly outcome: JobRunOutcome;
  /** The "run now" request it answered, for a manual run. */
  readonly request?: string;
  /** The error's message, for a failed run (at most 500 characters). */
  readonly error?: string;
  /**
   * The error's stack, for a run that threw an `Error`: its first lines (the message and at most 20 frames), at most
   * 2,000 characters, cut with a line saying so.
   */
  readonly stack?: string;
}

/** The longest error message a run record keeps. */
export const RUN_ERROR_CHARS = 500;
/** The most frames (`    at ...` lines) of a stack a run record keeps. */
export const RUN_STACK_FRAMES = 20;
/** The longest stack a run record keeps, in characters. */
export const RUN_STACK_CHARS = 2_000;

/**
 * What a run that threw keeps of it: the message (at most {@link RUN_ERROR_CHARS} characters) and, for an `Error` (or
 * anything with a string `message` and `stack`), its stack bounded by {@link boundedStack}. A string is a message alone.
 */
export function runFailure(thrown: unknown): { error: string; stack?: string } {
  if (typeof thrown === 'string') return { error: thrown.slice(0, RUN_ERROR_CHARS) };
  const candidate = thrown as { message?: unknown; stack?: unknown } | null;
  if (candidate !== null && typeof candidate === 'object' && typeof candidate.message === 'string') {
    const stack = typeof candidate.stack === 'string' && candidate.stack !== '' ? boundedStack(candidate.stack) : undefined;
    return { error: candidate.message.slice(0, RUN_ERROR_CHARS), ...(stack !== undefined && { stack }) };
  }
  return { error: String(thrown).slice(0, RUN_ERROR_CHARS) };
}

/**
 * A stack as a run record keeps it: the lines up to the {@link RUN_STACK_FRAMES}th frame and at most
 * {@link RUN_STACK_CHARS} characters, whole lines only, with a last line saying what was left out.
 */
export function boundedStack(stack: string): string {
  const lines = stack.replace(/\r\n/g, '\n').split('\n');
  const kept: string[] = [];
  let frames = 0;
  let index = 0;
  for (; index < lines.length; index++) {
    if (/^\s+at /.test(lines[index])) {
      if (frames === RUN_STACK_FRAMES) break;
      frames++;
    }
    kept.push(lines[index]);
  }
  const leftFrames = lines.slice(index).filter((line) => /^\s+at /.test(line)).length;
  let text = kept.join('\n');
  let cut = leftFrames > 0 ? `    ... ${leftFrames} more frame${leftFrames === 1 ? '' : 's'}` : '';
  if (text.length + (cut ? cut.length + 1 : 0) > RUN_STACK_CHARS) {
    cut = `    ... (cut at ${RUN_STACK_CHARS} characters)`;
    const room = RUN_STACK_CHARS - cut.length - 1;
    const end = text.lastIndexOf('\n', room);
    text = end > 0 ? text.slice(0, end) : text.slice(0, room);
  }
  return cut ? `${text}\n${cut}` : text;
}

/** Outcomes a run ends with that count as a failure in the history. */
export const FAILED_OUTCOMES: ReadonlySet<JobRunOutcome> = new Set<JobRunOutcome>(['failed', 'aborted', 'stopped']);

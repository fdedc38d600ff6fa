import { StoreTimeoutError } from './errors/store-timeout.error';

/** A call still waited for, and when it times out (this process's monotonic clock). */
interface Waiting {
  readonly at: number;
  readonly expire: () => void;
}

/*
 * One timer for every call in flight, armed for the earliest deadline, instead of a timer set and cleared per call:
 * decisions take a fraction of a millisecond and their deadlines are seconds away, so a per-call timer cost more
 * than the call's own client work. The timer fires at most once per deadline that can still expire, and a call
 * that answered is only forgotten (no timer to clear).
 */
const waiting = new Set<Waiting>();
let timer: NodeJS.Timeout | undefined;
let timerAt = Number.POSITIVE_INFINITY;

function arm(at: number): void {
  if (timer !== undefined && timerAt <= at) return;
  if (timer !== undefined) clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(sweep, Math.max(0, Math.ceil(at - performance.now())));
  timer.unref();
}

function sweep(): void {
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
  const now = performance.now();
  let next = Number.POSITIVE_INFINITY;
  for (const call of waiting) {
    if (call.at <= now) {
      waiting.delete(call);
      call.expire();
    } else if (call.at < next) {
      next = call.at;
    }
  }
  if (next !== Number.POSITIVE_INFINITY) arm(next);
}

/**
 * Waits for `operation` at most `timeoutMs` (no limit when undefined). The operation itself is not cancelled:
 * the Hazelcast client cannot cancel an invocation, so its outcome becomes unknown and the caller treats it so.
 * A late failure of an abandoned call is handled here (never an unhandled rejection).
 */
export function withDeadline<T>(operation: Promise<T>, timeoutMs: number | undefined, what: string): Promise<T> {
  if (timeoutMs === undefined) return operation;
  return new Promise<T>((resolve, reject) => {
    const call: Waiting = {
      at: performance.now() + Math.max(0, timeoutMs),
      expire: () => reject(new StoreTimeoutError(`${what}: no answer within ${timeoutMs} ms`)),
    };
    waiting.add(call);
    arm(call.at);
    operation.then(
      (value) => {
        waiting.delete(call);
        resolve(value);
      },
      (error: unknown) => {
        waiting.delete(call);
        reject(error);
      },
    );
  });
}

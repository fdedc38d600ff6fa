import type { Clock } from '../core/clock';
import type { AcquireResult, PermitDenied } from './acquire-result';
import { DenyReason } from './deny-reason';
import type { Permit } from './permit';
import type { PermitLease } from './permit-lease';
import type { PermitEngine } from './permit.engine';
import type { DecideOptions } from './permit-engine.options';

/** Where the module is in its life: decisions are made only while `ready`; `draining` still refreshes running work. */
export type GatekeeperPhase = 'starting' | 'ready' | 'draining' | 'closed';

/** Span attributes: what a span is about and how it ended. */
export type DecisionAttributes = Record<string, string | number | boolean | undefined>;

/** Runs a decision in a span of the app's tracer (the module's tracing), or just runs it. */
export interface DecisionTracer {
  span<T>(name: string, attributes: DecisionAttributes, work: (span: { set(attributes: DecisionAttributes): void }) => Promise<T>): Promise<T>;
}

/** What the decisions tell the module besides their answer. */
export interface DecisionNotes {
  /** Every decision this node makes, after its listeners heard it (counted and logged by the module's notices). */
  note(result: AcquireResult): void;
  /** A release failed (the permit simply expires). */
  releaseFailed(semaphore: string, error: unknown): void;
}

/**
 * This process's permit decisions, the one gate every run under a permit passes: acquire and refresh through the
 * engine, made only while the module is ready (refreshes also while it drains), each in a span and heard by
 * listeners; releases that never throw. What the executor, elections, allocation and the service decide through.
 *
 * It also keeps what this process does with its permits locally: who uses each semaphore's permit right now (a
 * permit has one user at a time, in a process as across the cluster), the leases of running work, and the
 * decisions and runs in flight (shutdown waits for them before it releases anything, so a grant landing late is
 * never run after its release).
 */
/** One user's hold on a semaphore's permit in this process (see {@link PermitDecisions.claim}). */
export interface PermitClaim {
  /** Who holds it: a job's name, `withPermit`, an election. */
  readonly by: string;
}

/** The denial while other work in this process (`by`, when known) uses the semaphore's permit. */
export function inUse(semaphore: string, by?: string): PermitDenied {
  const user = by === undefined ? 'another run in this process' : `${by}, in this process,`;
  return { granted: false, semaphore, reason: DenyReason.IN_USE, message: `${user} uses the permit` };
}

export class PermitDecisions {
  phase: GatekeeperPhase = 'starting';
  /** Leases of work running now. */
  readonly leases = new Set<PermitLease>();
  private readonly listeners = new Set<(result: AcquireResult) => void>();
  private readonly users = new Map<string, PermitClaim>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly runs = new Set<Promise<unknown>>();

  constructor(
    readonly engine: PermitEngine,
    /** The clock permits are timed by, and the skew allowed. */
    readonly clock: Clock,
    readonly clockSkewMs: number,
    private readonly tracer: DecisionTracer,
    private readonly notes: DecisionNotes,
  ) {}

  /** Whether new runs may start now. */
  accepting(): boolean {
    return this.phase === 'ready';
  }

  /** The denial while the module is not ready (starting, or shutting down). */
  notReady(semaphore: string): PermitDenied {
    return { granted: false, semaphore, reason: DenyReason.NOT_READY, message: `gatekeeper is ${this.phase}` };
  }

  /** Decides `semaphore` for a caller that holds its claim here (or needs none), only while ready. */
  decide(semaphore: string, options: DecideOptions): Promise<AcquireResult> {
    return this.tracer.span('gatekeeper.acquire', { 'gatekeeper.semaphore': semaphore }, async (span) => {
      if (this.phase !== 'ready') return traced(span, this.notReady(semaphore));
      return traced(span, this.noted(await this.inFlight(this.engine.tryAcquire(semaphore, options))));
    });
  }

  /** Refreshes exactly `permit`; also while draining, so running work keeps its permit until it finishes. */
  refresh(permit: Permit, options: DecideOptions): Promise<AcquireResult> {
    const attributes = { 'gatekeeper.semaphore': permit.semaphore, 'gatekeeper.token': permit.fencingToken };
    return this.tracer.span('gatekeeper.refresh', attributes, async (span) => {
      if (this.phase !== 'ready' && this.phase !== 'draining') return traced(span, this.notReady(permit.semaphore));
      return traced(span, this.noted(await this.inFlight(this.engine.refresh(permit, options))));
    });
  }

  /** Releases, never throwing, not before `notBefore` (ms): a permit that cannot be released simply expires. */
  async releaseQuietly(permit: Permit, notBefore = 0): Promise<boolean> {
    try {
      return (await this.engine.release(permit, notBefore)) === 'released';
    } catch (error) {
      this.notes.releaseFailed(permit.semaphore, error);
      return false;
    }
  }

  /** Hears every decision this node makes (acquire or refresh, by a job or by hand); returns the unsubscribe. */
  onDecision(listener: (result: AcquireResult) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Takes the semaphore's permit for one user, `by` (a job's name, `withPermit`, an election), as log lines name it;
   * `undefined` when another user of this process has it.
   */
  claim(semaphore: string, by: string): PermitClaim | undefined {
    if (this.users.has(semaphore)) return undefined;
    const key: PermitClaim = { by };
    this.users.set(semaphore, key);
    return key;
  }

  /** Gives the claim back (only the claimer can). */
  unclaim(semaphore: string, key: PermitClaim): void {
    if (this.users.get(semaphore) === key) this.users.delete(semaphore);
  }

  /** Whether a user of this process has the semaphore's permit. */
  isClaimed(semaphore: string): boolean {
    return this.users.has(semaphore);
  }

  /** The denial while another user of this process has the semaphore's permit, naming that user. */
  inUse(semaphore: string): PermitDenied {
    return inUse(semaphore, this.users.get(semaphore)?.by);
  }

  /** Tracks running work until it settles. */
  trackRun<T>(pending: Promise<T>): Promise<T> {
    this.runs.add(pending);
    return pending.finally(() => this.runs.delete(pending));
  }

  /** Settles once every decision in flight now has. */
  async decisionsSettled(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }

  /** Settles once all running work and decisions in flight now have. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.runs, ...this.inflight]);
  }

  /** Tracks a decision until it settles. */
  private inFlight<T>(pending: Promise<T>): Promise<T> {
    this.inflight.add(pending);
    return pending.finally(() => this.inflight.delete(pending));
  }

  private noted(result: AcquireResult): AcquireResult {
    for (const listener of this.listeners) listener(result);
    this.notes.note(result);
    return result;
  }
}

/** A decision's outcome on its span: granted (with its token) or the reason it was denied. */
function traced(span: { set(attributes: DecisionAttributes): void }, result: AcquireResult): AcquireResult {
  span.set(result.granted
    ? { 'gatekeeper.outcome': result.outcome, 'gatekeeper.token': result.permit.fencingToken }
    : { 'gatekeeper.outcome': 'denied', 'gatekeeper.deny_reason': result.reason });
  return result;
}

import type { Clock } from '../core/clock';
import type { AcquireResult, PermitDenied } from './acquire-result';
import { DenyReason } from './deny-reason';
import type { LocalPermits } from './local-permits';
import type { Permit } from './permit';
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
 * engine, awaited by the process's claims (so shutdown can wait for them), made only while the module is ready
 * (refreshes also while it drains), each in a span and heard by listeners; releases that never throw. What the
 * executor, elections, allocation and the service decide through.
 */
export class PermitDecisions {
  phase: GatekeeperPhase = 'starting';
  private readonly listeners = new Set<(result: AcquireResult) => void>();

  constructor(
    readonly engine: PermitEngine,
    readonly local: LocalPermits,
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
      return traced(span, this.noted(await this.local.decision(this.engine.tryAcquire(semaphore, options))));
    });
  }

  /** Refreshes exactly `permit`; also while draining, so running work keeps its permit until it finishes. */
  refresh(permit: Permit, options: DecideOptions): Promise<AcquireResult> {
    const attributes = { 'gatekeeper.semaphore': permit.semaphore, 'gatekeeper.token': permit.fencingToken };
    return this.tracer.span('gatekeeper.refresh', attributes, async (span) => {
      if (this.phase !== 'ready' && this.phase !== 'draining') return traced(span, this.notReady(permit.semaphore));
      return traced(span, this.noted(await this.local.decision(this.engine.refresh(permit, options))));
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

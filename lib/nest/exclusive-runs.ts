import { Inject, Injectable } from '@nestjs/common';
import type { PermitDenied } from '../permits/acquire-result';
import { validateSemaphoreName } from '../permits/definition.validator';
import { DenyReason } from '../permits/deny-reason';
import type { Permit } from '../permits/permit';
import { PermitLease } from '../permits/permit-lease';
import { GATEKEEPER_OPTIONS } from './gatekeeper.constants';
import { messages } from './gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';
import { permitContext } from './permit-context';
import { PermitRuntime } from './permit-runtime';

/** How a run under a permit is taken and given back (decorated ticks and withPermit). */
export interface RunOptions {
  local?: boolean;
  keepAlive?: boolean;
  maxRunTimeMs?: number;
  /** Release after the run, keeping the permit until this many ms after its grant (release mode, withPermit). */
  releaseAfter?: { lockAtLeastForMs: number };
}

/** What a run under a permit came to. */
export type RunOutcome<T> = { ran: true; value: T; permit: Permit; outcome: 'granted' | 'refreshed' | 'held' } | { ran: false; denied: PermitDenied };

/**
 * Runs work under a semaphore's permit, one at a time per semaphore in this process: what decorated
 * ticks and `withPermit` share.
 * Used inside the module, not by applications.
 */
@Injectable()
export class ExclusiveRuns {
  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    private readonly runtime: PermitRuntime,
  ) {}

  /**
   * One run under the semaphore's permit: claim it in this process, decide, start only on a permit valid for a
   * quarter of its duration or more, keep it alive while `fn` runs, and release it after if asked.
   */
  async run<T>(semaphore: string, fn: (lease: PermitLease) => T | Promise<T>, options: RunOptions = {}): Promise<RunOutcome<T>> {
    validateSemaphoreName(semaphore);
    const { runtime } = this;
    if (runtime.phase !== 'ready') return { ran: false, denied: runtime.notReady(semaphore) };
    const key = runtime.local.claim(semaphore);
    if (!key) return { ran: false, denied: runtime.inUse(semaphore) };
    let lease: PermitLease | undefined;
    try {
      const result = await runtime.decide(semaphore, { local: options.local });
      if (!result.granted) return { ran: false, denied: result };
      // Decided while ready, but shutdown may have begun meanwhile: never start then (the release follows).
      if (runtime.phase !== 'ready') return { ran: false, denied: runtime.notReady(semaphore) };
      const { permit } = result;
      const left = permit.expiresAt - this.options.clockSkewMs - this.options.clock.now();
      const margin = Math.floor((permit.expiresAt - permit.refreshedAt) / 4);
      if (left < margin) {
        return { ran: false, denied: { granted: false, semaphore, reason: DenyReason.PERMIT_LOST, message: messages.tooLate(left, margin) } };
      }
      // News that arrived with (or just before) the grant's answer, before anyone watched: judge it now.
      const news = runtime.engine.newsAgainst(permit);
      if (news) return { ran: false, denied: news };
      lease = new PermitLease(permit, (p) => runtime.refresh(p, { local: true }), (p, onLost) => runtime.engine.watch(p, onLost), this.options.clock, {
        keepAlive: options.keepAlive,
        clockSkewMs: this.options.clockSkewMs,
        maxRunTimeMs: options.maxRunTimeMs,
      });
      runtime.local.leases.add(lease);
      const running = lease;
      const value = await runtime.local.run(permitContext.run(running, async () => fn(running)));
      return { ran: true, value, permit, outcome: result.outcome };
    } finally {
      if (lease) {
        lease.end();
        runtime.local.leases.delete(lease);
        if (options.releaseAfter) await runtime.releaseQuietly(lease.permit, lease.permit.grantedAt + options.releaseAfter.lockAtLeastForMs);
      }
      runtime.local.unclaim(semaphore, key);
    }
  }
}

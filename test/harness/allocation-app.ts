/*
 * An allocation node, run as a real process by fault tests, and the settings that start it. As a process
 * it is a Nest application context that takes part in one allocation through `AllocationService.participate`, as
 * an application would. Each resource it owns is one run in the history (see history.ts), `semaphore` being
 * `<allocation>/<resource>` and `token` the resource's epoch: `start` when `onAssigned` hands it over, an `effect`
 * every `effectEveryMs` right after `lease.owns(id)` said yes, and, when it is taken away, a last `effect` at the
 * end of `onRevoked` if its lease still vouches by the clock (the work may act until it returns: that is the
 * promise, also when the node's part is lost as a whole, within the lease) and an `end`. Every `reportEveryMs` it appends an `allocation`
 * event with what `AllocationService.status()` says. SIGTERM closes the app (a graceful stop).
 *
 * Imported by a test (not run), it only exports the settings and `startAllocationNode`.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AllocationService, GatekeeperModule, type AllocationInput, type DurationInput, type ResourceLease } from '../../lib';
import { bootFixture, env, gatekeeperOptionsFromEnv, stopWhenOrphaned } from '../fixtures/fixture-process';
import { appendEvent, type AllocationReportEvent, type RunEvent, type Unstamped } from './history';
import { nodeBasicsEnv, startNodeProcess, type NodeBasics, type NodeProcess } from './node-process';

/** Settings of one allocation node. */
export interface AllocationNodeSettings extends NodeBasics {
  group?: string;
  /** The allocation (module option `allocations`); default `{ name: 'queues' }`. */
  allocation?: AllocationInput;
  /** The resource set: `resource-000` … of this size. Default 100. */
  resources?: number;
  /** How long `onRevoked` takes. Default 0. */
  revokeMs?: number;
  maxClockSkew?: DurationInput;
  /** A side effect on every owned resource this often. Default 200. */
  effectEveryMs?: number;
  /** An `allocation` report this often. Default 200. */
  reportEveryMs?: number;
  /** The process stops itself (gracefully) after this long, and at once if its test is gone. Default 3 minutes. */
  lifetimeMs?: number;
}

/** The environment an allocation node process reads. */
export function allocationEnv(s: AllocationNodeSettings): NodeJS.ProcessEnv {
  return {
    ...nodeBasicsEnv(s),
    ALLOCATION: JSON.stringify(s.allocation ?? { name: 'queues' }),
    RESOURCES: String(s.resources ?? 100),
    REVOKE_MS: String(s.revokeMs ?? 0),
    EFFECT_EVERY_MS: String(s.effectEveryMs ?? 200),
    REPORT_EVERY_MS: String(s.reportEveryMs ?? 200),
    ...(s.group !== undefined && { GROUP: s.group }),
    ...(s.maxClockSkew !== undefined && { MAX_CLOCK_SKEW: String(s.maxClockSkew) }),
    LIFETIME_MS: String(s.lifetimeMs ?? 180_000),
  };
}

/** Starts this app as node `settings.name` and waits until it is READY (booted, taking part). */
export function startAllocationNode(settings: AllocationNodeSettings): Promise<NodeProcess> {
  return startNodeProcess(join(__dirname, 'allocation-app.ts'), settings.name, allocationEnv(settings), settings.historyFile);
}

/** The resource names a node with `count` resources uses. */
export function resourceNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `resource-${String(i).padStart(3, '0')}`);
}

function main(): void {
  const historyFile = env('HISTORY_FILE');
  const nodeName = env('NODE_NAME');
  const allocation = JSON.parse(env('ALLOCATION')) as AllocationInput;
  const resources = resourceNames(Number(env('RESOURCES')));
  const revokeMs = Number(process.env.REVOKE_MS ?? 0);
  const effectEveryMs = Number(process.env.EFFECT_EVERY_MS ?? 200);
  const reportEveryMs = Number(process.env.REPORT_EVERY_MS ?? 200);
  const durationFromEnv = (v: string): DurationInput => (/^\d+$/.test(v) ? Number(v) : v);
  const record = (event: Unstamped<RunEvent>) => appendEvent(historyFile, event, nodeName);
  const base = (id: string, epoch: number) => ({ semaphore: `${allocation.name}/${id}`, job: id, token: epoch });

  @Injectable()
  class AllocationNode implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
    /** Resource → epoch of what the work holds now. */
    private readonly held = new Map<string, number>();
    private lease?: ResourceLease;
    private timers: NodeJS.Timeout[] = [];

    constructor(@Inject(AllocationService) private readonly allocations: AllocationService) {}

    onModuleInit(): void {
      this.allocations.participate(allocation.name, {
        resources: () => resources,
        onAssigned: (ids, lease) => this.assigned(ids, lease),
        onRevoked: (ids) => this.revoked(ids),
      });
    }

    onApplicationBootstrap(): void {
      this.timers.push(setInterval(() => this.work(), effectEveryMs), setInterval(() => this.report(), reportEveryMs));
    }

    onModuleDestroy(): void {
      this.timers.forEach(clearInterval);
    }

    private assigned(ids: string[], lease: ResourceLease): void {
      this.lease = lease;
      const validUntil = (lease as { validUntil?: number }).validUntil ?? Date.now();
      for (const id of ids) {
        const epoch = lease.epochOf(id) ?? -1;
        this.held.set(id, epoch);
        record({ ...base(id, epoch), type: 'start', tick: epoch, validUntil, valid: lease.owns(id), grantedAt: Date.now() });
      }
    }

    private async revoked(ids: string[]): Promise<void> {
      const lease = this.lease as { validUntil?: number; signal?: AbortSignal } | undefined;
      if (revokeMs) await sleep(revokeMs);
      // Until onRevoked returns the work may still act on its resources: the library moves them only after it
      // returned, or once the lease lapsed. So it acts once more at the end, if its lease still vouches by the clock
      // (a part lost to an operator's edit does; a frozen node's, resumed past its lease, does not).
      const validUntil = lease?.validUntil ?? 0;
      const vouches = Date.now() < validUntil;
      for (const id of ids) {
        const epoch = this.held.get(id);
        if (epoch === undefined) continue;
        this.held.delete(id);
        if (vouches) record({ ...base(id, epoch), type: 'effect', valid: true, validUntil });
        record({ ...base(id, epoch), type: 'end', outcome: lease?.signal?.aborted ? 'aborted' : 'done', valid: vouches });
      }
    }

    private work(): void {
      const lease = this.lease;
      if (!lease) return;
      const validUntil = (lease as { validUntil?: number }).validUntil;
      for (const [id, epoch] of this.held) {
        if (lease.owns(id)) record({ ...base(id, epoch), type: 'effect', valid: true, ...(validUntil !== undefined && { validUntil }) });
      }
    }

    private report(): void {
      const status = this.allocations.status(allocation.name);
      appendEvent<AllocationReportEvent>(historyFile, {
        type: 'allocation', allocation: allocation.name, owned: this.held.size, skew: status.skew, unowned: status.unowned,
        participants: status.owners.filter((o) => o.participating).length, generation: status.lastRebalance?.generation ?? 0,
        settled: status.lastRebalance?.settled ?? false,
      }, nodeName);
    }
  }

  @Module({
    imports: [
      GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
        identity: process.env.GROUP ? { group: process.env.GROUP } : undefined,
        allocations: [allocation],
        membership: false,
        ...(process.env.MAX_CLOCK_SKEW && { maxClockSkew: durationFromEnv(process.env.MAX_CLOCK_SKEW) }),
      })),
    ],
    providers: [AllocationNode],
  })
  class AllocationAppModule {}

  stopWhenOrphaned(nodeName);
  void bootFixture(AllocationAppModule);
}

if (require.main === module) main();

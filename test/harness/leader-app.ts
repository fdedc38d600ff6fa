/*
 * A leader-election node, run as a real process by fault tests, and the settings that start it. As a
 * process it is a Nest application context that stands in one election through the module's `elections` option
 * and does its leader work with `ClusterService.whileLeader`, as an application would. Each leadership term is one
 * run in the history (see history.ts): `start` (token = the lease's epoch; tick = the epoch too, so every term is
 * one "tick" of the election and a term resumed on an old epoch shows up as a duplicate), then every
 * `effectEveryMs` an `effect` right after `lease.assertValid()` passed (or `abort` when it threw), a `signal` when
 * the lease's signal fires, and an `end`. Every `reportEveryMs`, and on each change `ClusterService.changes()`
 * emits, it appends a `report` event with what the node says about who leads and who is here. SIGTERM closes the
 * app (shutdown hooks), so a graceful handover is exercised.
 *
 * Imported by a test (not run), it only exports the settings and `startLeaderNode`.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { ClusterService, GatekeeperModule, type DurationInput, type ElectionInput, type LeaderLease } from '../../lib';
import { electionSemaphore } from '../../lib/elections/election';
import { bootFixture, env, gatekeeperOptionsFromEnv, stopWhenOrphaned } from '../fixtures/fixture-process';
import { appendEvent, type ReportEvent, type RunEvent, type Unstamped } from './history';
import { nodeBasicsEnv, startNodeProcess, type NodeBasics, type NodeProcess } from './node-process';

/** Settings of one leader node. */
export interface LeaderNodeSettings extends NodeBasics {
  group?: string;
  /** The election this node stands in (module option `elections`); default `{ name: 'leader' }`. */
  election?: ElectionInput;
  /** Presence: how often each instance renews its entry and re-reads everyone's, and how long an entry holds. */
  membership?: { interval: DurationInput; ttl?: DurationInput };
  maxClockSkew?: DurationInput;
  /** This node's gatekeeper clock runs this far ahead of real time (negative: behind). */
  clockOffsetMs?: number;
  /** A side effect every this many ms of a term, each after `lease.assertValid()`. Default 50. */
  effectEveryMs?: number;
  /** A `report` event every this many ms. Default 100. */
  reportEveryMs?: number;
  /**
   * The process stops itself (gracefully) after this long, and at once if the test process that started it is
   * gone, so a test that failed before stopping it leaves nothing running. Default 3 minutes.
   */
  lifetimeMs?: number;
}

/** The environment a leader node process reads. */
export function leaderEnv(s: LeaderNodeSettings): NodeJS.ProcessEnv {
  return {
    ...nodeBasicsEnv(s),
    ELECTION: JSON.stringify(s.election ?? { name: 'leader' }),
    ...(s.group !== undefined && { GROUP: s.group }),
    ...(s.membership !== undefined && { MEMBERSHIP: JSON.stringify(s.membership) }),
    ...(s.maxClockSkew !== undefined && { MAX_CLOCK_SKEW: String(s.maxClockSkew) }),
    ...(s.clockOffsetMs !== undefined && { CLOCK_OFFSET_MS: String(s.clockOffsetMs) }),
    ...(s.effectEveryMs !== undefined && { EFFECT_EVERY_MS: String(s.effectEveryMs) }),
    ...(s.reportEveryMs !== undefined && { REPORT_EVERY_MS: String(s.reportEveryMs) }),
    LIFETIME_MS: String(s.lifetimeMs ?? 180_000),
  };
}

/** Starts this app as node `settings.name` and waits until it is READY (booted: connected, standing). */
export function startLeaderNode(settings: LeaderNodeSettings): Promise<NodeProcess> {
  return startNodeProcess(join(__dirname, 'leader-app.ts'), settings.name, leaderEnv(settings), settings.historyFile);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The process itself: its module is built here, so importing this file for its settings boots nothing. */
function main(): void {
  const historyFile = env('HISTORY_FILE');
  const nodeName = env('NODE_NAME');
  const offsetMs = Number(process.env.CLOCK_OFFSET_MS ?? 0);
  const effectEveryMs = Number(process.env.EFFECT_EVERY_MS ?? 50);
  const reportEveryMs = Number(process.env.REPORT_EVERY_MS ?? 100);
  const election = JSON.parse(env('ELECTION')) as ElectionInput;
  const semaphore = electionSemaphore(election.name);
  const durationFromEnv = (v: string): DurationInput => (/^\d+$/.test(v) ? Number(v) : v);
  const record = (event: Unstamped<RunEvent>) => appendEvent(historyFile, event, nodeName);

  /** One leadership term: the leader work `whileLeader` runs each time this node is elected. */
  async function term(lease: LeaderLease): Promise<void> {
    const base = { semaphore, job: election.name, token: lease.epoch };
    record({
      ...base, type: 'start', tick: lease.epoch, validUntil: lease.validUntil - offsetMs, valid: lease.isValid(), grantedAt: lease.since - offsetMs,
    });
    const onSignal = () => record({ ...base, type: 'signal', reason: reasonOf(lease.signal.reason) });
    if (lease.signal.aborted) onSignal();
    else lease.signal.addEventListener('abort', onSignal, { once: true });
    try {
      for (;;) {
        // The work waits for its next side effect, or for the signal (it wakes at once on it).
        await sleep(effectEveryMs, undefined, { signal: lease.signal }).catch(() => undefined);
        try {
          lease.assertValid(); // the check leader work makes right before each side effect
        } catch (error) {
          record({ ...base, type: 'abort', reason: reasonOf(error) });
          record({ ...base, type: 'end', outcome: 'aborted', valid: lease.isValid() });
          return;
        }
        record({ ...base, type: 'effect', valid: true, validUntil: lease.validUntil - offsetMs });
        if (lease.signal.aborted) {
          // assertValid() passed although the signal had fired: a broken lease. The effect above shows it; stop
          // here rather than spin (the signal no longer delays anything).
          record({ ...base, type: 'end', outcome: 'aborted', valid: lease.isValid() });
          return;
        }
      }
    } finally {
      lease.signal.removeEventListener('abort', onSignal);
    }
  }

  @Injectable()
  class LeaderNode implements OnApplicationBootstrap, OnModuleDestroy {
    private timer?: NodeJS.Timeout;
    private subscription?: Subscription;

    constructor(@Inject(ClusterService) private readonly cluster: ClusterService) {
      // Registered before the module starts its elections, so the first term already runs it.
      cluster.whileLeader(election.name, term);
    }

    onApplicationBootstrap(): void {
      this.subscription = this.cluster.changes().subscribe((change) => this.report(change.type));
      this.timer = setInterval(() => this.report('poll'), reportEveryMs);
      this.report('started');
    }

    onModuleDestroy(): void {
      clearInterval(this.timer);
      this.subscription?.unsubscribe();
    }

    private report(cause: string): void {
      let status: ReturnType<ClusterService['status']>;
      try {
        status = this.cluster.status(election.name);
      } catch (error) {
        process.stderr.write(`${nodeName}: no status: ${reasonOf(error)}\n`);
        return;
      }
      const { leader } = status;
      appendEvent<ReportEvent>(historyFile, {
        type: 'report', election: election.name, instance: this.cluster.instanceId, isLeader: status.isLeader,
        ...(leader && { leader: { instance: leader.instance, acquirer: leader.acquirer, group: leader.group, epoch: leader.epoch } }),
        participants: status.participants.map(({ instance, acquirer, group }) => ({ instance, acquirer, group })),
        clashes: Object.fromEntries([...this.cluster.nameClashes()].map(([name, list]) => [name, list.map((p) => p.instance)])),
        cause,
      }, nodeName);
    }
  }

  const membership = process.env.MEMBERSHIP ? JSON.parse(process.env.MEMBERSHIP) as { interval: DurationInput; ttl?: DurationInput } : undefined;
  @Module({
    imports: [
      GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
        identity: process.env.GROUP ? { group: process.env.GROUP } : undefined,
        clock: { now: () => Date.now() + offsetMs },
        elections: [election],
        ...(membership && { membership }),
        ...(process.env.MAX_CLOCK_SKEW && { maxClockSkew: durationFromEnv(process.env.MAX_CLOCK_SKEW) }),
      })),
    ],
    providers: [LeaderNode],
  })
  class LeaderAppModule {}

  stopWhenOrphaned(nodeName);
  void bootFixture(LeaderAppModule);
}

if (require.main === module) main();

import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { admittedBy } from '../../permits/permit.rules';
import { RunNowRefusedError } from '../../schedules/errors/run-now-refused.error';
import type { RunNowResult } from '../../schedules/job-view';
import type { RunRequest } from '../../schedules/run-request';
import type { RunRequestStore } from '../../schedules/run-request-store';
import { claimRequest, withdrawRequest } from '../../schedules/run-request.rules';
import { CONFLICT, retryOnConflict } from '../../store/compare-and-set';
import { WriteConflictError } from '../../core/errors/write-conflict.error';
import { GATEKEEPER_JOB_RUNNER, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_RUN_REQUEST_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { PresenceRuntime } from '../presence/presence.runtime';
import { JobRegistry } from './job-registry';
import type { JobRunner, ManualRun } from './job-start';

/** Tries of a claim of a request before this node leaves it to another (the requester's nudges make races). */
const CLAIM_ATTEMPTS = 5;

/** How often the requester looks at its request, at first and at most. */
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 200;
/** How often the requester bumps its pending request, so nodes that lost its event hear it again. */
const NUDGE_MS = 1_000;

/**
 * "Run now": a request in the cluster that the node holding the job's permit (or, with no holder, any node its
 * definition admits) claims by compare-and-set under that permit, then runs the job on the tick path, marked
 * manual. The requester waits for the claim, bumps the request every second while it waits (events can be lost
 * silently), and withdraws it at its timeout by compare-and-set: the claim and the withdrawal cannot both win, so
 * a request runs at most once and never after its requester gave up. Used inside the module, not by applications.
 */
@Injectable()
export class RunRequests {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  /** Requests this node is trying now (each is tried once per hearing, never twice at once). */
  private readonly trying = new Set<string>();
  private connected?: Promise<void>;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_RUN_REQUEST_STORE) private readonly store: RunRequestStore,
    private readonly jobs: JobRegistry,
    private readonly permits: PermitsRuntime,
    private readonly presence: PresenceRuntime,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** What runs a request (resolved at first use: the runner itself depends on the schedules, which hold this). */
  private get runner(): JobRunner {
    return this.moduleRef.get<JobRunner>(GATEKEEPER_JOB_RUNNER, { strict: false });
  }

  /** Starts hearing requests. */
  connect(): Promise<void> {
    this.connected ??= this.store.connect((request) => void this.heard(request)).catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  async close(): Promise<void> {
    if (!this.connected) return;
    this.connected = undefined;
    await this.store.close();
  }

  /**
   * Asks the cluster to run `job` once now; resolves when a node started it, or with `waitMs`, once its run ended
   * (or the wait is over: then without an outcome).
   */
  async request(job: string, timeoutMs: number, waitMs?: number): Promise<RunNowResult> {
    const registered = this.jobs.get(job);
    if (!registered) throw new RunNowRefusedError(job, 'UNKNOWN_JOB', `no job of that name on this node (${this.jobs.all().map((j) => j.name).join(', ') || 'it has none'})`);
    const { semaphore } = registered.options;
    const definition = this.permits.admin.list().find((d) => d.name === semaphore);
    if (definition?.permits === 0) throw new RunNowRefusedError(job, 'PAUSED', `its semaphore "${semaphore}" is paused (permits: 0); resume it first`);
    if (registered.paused) throw new RunNowRefusedError(job, 'PAUSED', 'the runtime schedule is paused; resume it first');
    // Said at once, naming until when, rather than a request that waits out its timeout for a permit nobody can get.
    const now = this.options.clock.now();
    const held = this.permits.viewedPermits(semaphore);
    if (definition && definition.permits > 0 && held.length >= definition.permits && held.every((p) => p.released)) {
      const until = Math.min(...held.map((p) => p.expiresAt));
      throw new RunNowRefusedError(job, 'LOCKED', `its last run released the permit of "${semaphore}" but keeps it until ${new Date(until).toISOString()} (lockAtLeastFor): no run starts before then; ask again after it`);
    }
    const graceUntil = this.permits.viewedGraceUntil(semaphore);
    if (graceUntil !== undefined && graceUntil + this.options.clockSkewMs > this.options.permitClock.now()) {
      throw new RunNowRefusedError(job, 'RECOVERING', `the cluster lost the data of "${semaphore}" and grants it again only after ${new Date(graceUntil + this.options.clockSkewMs).toISOString()} (the recovery wait that keeps two holders apart): no run starts before then`);
    }
    const live = this.presence.confirmedParticipants();
    if (definition && live && admittedBy(definition, live).length === 0) {
      throw new RunNowRefusedError(job, 'NO_ELIGIBLE_NODE', `no live node matches "${semaphore}" (group ${definition.groupPattern}, acquirer ${definition.acquirerPattern}); live: ${live.map((p) => `${p.acquirer} (${p.group})`).join(', ') || 'none'}`);
    }
    await this.connect();
    const request: RunRequest = {
      id: randomUUID(), job, requestedAt: now, requestedBy: this.options.holder.acquirer, state: 'pending', nudge: 0, expiresAt: now + timeoutMs,
    };
    await this.store.create(request, this.options.storeTimeoutMs);
    void this.heard(request);
    try {
      const started = await this.awaitStart(request, timeoutMs);
      return waitMs === undefined ? started : { ...started, ...(await this.awaitEnd(request.id, waitMs)) };
    } finally {
      await this.store.remove(request.id).catch(() => undefined);
    }
  }

  /** Polls the request until the node that ran it wrote how the run ended, for at most `waitMs`. */
  private async awaitEnd(id: string, waitMs: number): Promise<Pick<RunNowResult, 'outcome' | 'durationMs' | 'error' | 'stack'>> {
    const deadline = performance.now() + waitMs;
    for (let wait = POLL_FIRST_MS; ; wait = Math.min(POLL_MAX_MS, wait * 2)) {
      const finished = (await this.store.read(id, this.options.storeTimeoutMs))?.request.finished;
      if (finished) return { outcome: finished.outcome, durationMs: finished.durationMs, ...(finished.error !== undefined && { error: finished.error }), ...(finished.stack !== undefined && { stack: finished.stack }) };
      const left = deadline - performance.now();
      if (left <= 0) return {};
      await sleep(Math.min(wait, left));
    }
  }

  private async awaitStart(request: RunRequest, timeoutMs: number): Promise<RunNowResult> {
    const deadline = performance.now() + timeoutMs;
    let wait = POLL_FIRST_MS;
    let nudgedAt = performance.now();
    for (;;) {
      // Past the deadline (a withdrawal that lost to a claim), still at a poll's pace while the claimant starts it.
      await sleep(Math.min(wait, Math.max(POLL_FIRST_MS, deadline - performance.now())));
      wait = Math.min(POLL_MAX_MS, wait * 2);
      const stored = await this.store.read(request.id, this.options.storeTimeoutMs);
      const started = stored?.request.started;
      if (started) return { requestId: request.id, job: request.job, node: started.node, instance: started.instance, token: started.token, startedAt: started.at };
      if (!stored) throw new RunNowRefusedError(request.job, 'NOT_STARTED', 'the request was removed before any node started it');
      if (performance.now() >= deadline) {
        const withdrawn = withdrawRequest(stored.request);
        if (withdrawn && (await this.store.compareAndSet(request.id, stored, withdrawn, this.options.storeTimeoutMs))) {
          throw new RunNowRefusedError(request.job, 'NOT_STARTED', `no node started it within ${timeoutMs} ms (the request is withdrawn and will not run)`);
        }
        continue; // claimed meanwhile: the next read says by whom
      }
      if (performance.now() - nudgedAt >= NUDGE_MS) {
        nudgedAt = performance.now();
        await this.store.compareAndSet(request.id, stored, { ...stored.request, nudge: stored.request.nudge + 1 }, this.options.storeTimeoutMs);
      }
    }
  }

  /**
   * A request heard here: tried when this node has the job, its definition admits this node, and no other node
   * holds the job's permit (the holder runs it). The tick path decides the permit; the claim happens under it.
   */
  private async heard(request: RunRequest): Promise<void> {
    if (request.state !== 'pending' || this.trying.has(request.id)) return;
    if (this.options.clock.now() >= request.expiresAt - this.options.clockSkewMs) return;
    const job = this.jobs.get(request.job);
    if (!job) return;
    const { semaphore } = job.options;
    const definition = this.permits.admin.list().find((d) => d.name === semaphore);
    if (definition && admittedBy(definition, [this.options.holder]).length === 0) return;
    const holders = this.permits.viewedPermits(semaphore);
    if (holders.length > 0 && !holders.some((p) => p.instance === this.options.holder.instance)) return;
    this.trying.add(request.id);
    try {
      const manual: ManualRun = {
        request: request.id,
        claim: (token) => this.claim(request.id, token),
        finish: (finished) => void this.finish(request.id, finished).catch(() => undefined),
      };
      await this.runner.run(job, { kind: 'manual', manual }).catch((error: unknown) => {
        if (!manual.started) this.logger.warn(`run now of ${request.job} failed before it started: ${(error as Error).message}`);
      });
    } finally {
      this.trying.delete(request.id);
    }
  }

  /** Writes how the run of request `id` ended into it, if the requester still keeps it (it does while it waits). */
  private async finish(id: string, finished: NonNullable<RunRequest['finished']>): Promise<void> {
    await retryOnConflict(`finish run request ${id}`, async () => {
      const stored = await this.store.read(id, this.options.storeTimeoutMs);
      if (!stored || stored.request.state !== 'started' || stored.request.finished) return true;
      return (await this.store.compareAndSet(id, stored, { ...stored.request, finished }, this.options.storeTimeoutMs)) ? true : CONFLICT;
    }, { attempts: CLAIM_ATTEMPTS });
  }

  private async claim(id: string, token: number): Promise<boolean> {
    const claimant = { node: this.options.holder.acquirer, instance: this.options.holder.instance, token };
    return retryOnConflict(`claim run request ${id}`, async () => {
      const stored = await this.store.read(id, this.options.storeTimeoutMs);
      const next = claimRequest(stored?.request, claimant, this.options.clock.now(), this.options.clockSkewMs);
      if (typeof next === 'string' || !stored) return false;
      if (await this.store.compareAndSet(id, stored, next, this.options.storeTimeoutMs)) return true;
      return CONFLICT; // the requester bumped it, or another node claimed it: read again
    }, { attempts: CLAIM_ATTEMPTS }).catch((error: unknown) => {
      if (error instanceof WriteConflictError) return false;
      throw error;
    });
  }
}

import type { SqlTransaction } from '../../store/sql-transaction';
import { invalidDefinition } from '../../core/errors/input.errors';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Deadline } from '../../core/deadline';
import { WriteConflictError } from '../../core/errors/write-conflict.error';
import { runFailure } from '../run-record';
import { RunNowRefusedError } from '../errors/run-now-refused.error';
import type { RunNowResult } from '../job-view';
import type { JobRunner } from './job-runner';
import type { RunLog } from './run-log';
import type { ObservedRun, ObservedRunEnd } from './run-observer';
import type { RunPipelineObserver } from './run-observers';
import type { Clock } from '../../core/clock';
import { admittedBy, livePermits } from '../../permits/permit.rules';
import type { Holder, NodeIdentity } from '../../permits/permit';
import type { SemaphoreEntry } from '../../permits/semaphore-entry';
import { claimRequest, withdrawRequest, type RunRequest, type RunRequestStore } from '../run-request.store';
import type { ManualRun, ScheduledJob } from './scheduled-job';

/** Tries of a claim of a request before this node leaves it to another (the requester's nudges make races). */
const CLAIM_ATTEMPTS = 5;
/** How often the requester looks at its request, at first and at most. */
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 200;
/**
 * The run-now requests' declared staleness policy: how often the requester bumps its pending request, while it waits
 * and only then (an idle cluster writes nothing). Every node hears requests from the feed and reads them all again
 * when it says changes may have been missed; the bump is for what that cannot give: a node that declined a request
 * (another held the job's permit) tries it again once the holder is gone, and a node whose feed lost the event hears
 * it again.
 */
const NUDGE_MS = 1_000;

/** What run-now requests stand on. */
export interface RunNowParts {
  readonly store: RunRequestStore;
  readonly view: RunNowView;
  readonly runner: Pick<JobRunner, 'run'>;
  /** The deadline of one store call. */
  readonly storeTimeoutMs: number;
  readonly log: RunLog;
}

/**
 * "Run now": a request in the cluster that the node holding the job's permit (or, with no holder, any node its
 * definition admits) claims by compare-and-set under that permit, then runs the job on the runner's one path, marked
 * manual. The requester waits for the claim, bumps the request every second while it waits (events can be lost
 * silently), and withdraws it at its timeout by compare-and-set: the claim and the withdrawal cannot both win, so
 * a request runs at most once and never after its requester gave up. How the run ended is written into the request
 * by this class's run observer ({@link outcomes}).
 */
/** A run requested in the application's transaction (`ScheduleService.runNow` with `transaction`). */
export interface RunNowRequested {
  /** The request's id, as the history's manual run will name it. */
  readonly requestId: string;
  /** The job's name. */
  readonly job: string;
  /** No node starts it after this (epoch ms). */
  readonly expiresAt: number;
}

export class RunNowRequests {
  /** The run-now outcome's place in the run seam: a manual run's end is written into its request. */
  readonly outcomes: RunPipelineObserver = {
    ended: (run: ObservedRun, end: ObservedRunEnd) => {
      if (run.request === undefined) return;
      const finished = { outcome: end.outcome, durationMs: end.durationMs, ...(end.outcome !== 'completed' && runFailure(end.error)) };
      void this.finish(run.request, finished).catch(() => undefined);
    },
  };
  /** Requests this node is trying now (each is tried once per hearing, never twice at once). */
  private readonly trying = new Set<string>();
  private readonly eligibility: RunNowEligibility;
  private connected?: Promise<void>;

  constructor(private readonly parts: RunNowParts) {
    this.eligibility = new RunNowEligibility(parts.view);
  }

  /** Starts hearing requests. */
  connect(): Promise<void> {
    this.connected ??= this.parts.store.connect((request) => void this.heard(request)).catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  async close(): Promise<void> {
    if (!this.connected) return;
    this.connected = undefined;
    await this.parts.store.close();
  }

  /**
   * Asks the cluster to run `job` once now; resolves when a node started it, or with `waitMs`, once its run ended
   * (or the wait is over: then without an outcome).
   */
  async request(job: string, timeoutMs: number, waitMs?: number): Promise<RunNowResult> {
    this.eligibility.requested(job);
    await this.connect();
    const { view, store, storeTimeoutMs } = this.parts;
    const now = view.clock.now();
    const request: RunRequest = {
      id: randomUUID(), job, requestedAt: now, requestedBy: view.holder.acquirer, state: 'pending', nudge: 0, expiresAt: now + timeoutMs,
    };
    await store.create(request, storeTimeoutMs);
    void this.heard(request);
    try {
      const started = await this.awaitStart(request, timeoutMs);
      return waitMs === undefined ? started : { ...started, ...(await this.awaitEnd(request.id, waitMs)) };
    } finally {
      await store.remove(request.id).catch(() => undefined);
    }
  }

  /**
   * Asks the cluster to run `job` once, in the application's own transaction: the request exists once that commits,
   * and the node that holds the job's permit starts it then, if it can before `timeoutMs` from now. Nobody waits for
   * it here: the request is gone an hour later, whether it ran or not.
   */
  async requestIn(transaction: SqlTransaction, job: string, timeoutMs: number): Promise<RunNowRequested> {
    this.eligibility.requested(job);
    const { view, store } = this.parts;
    if (!store.createIn) throw invalidDefinition(undefined, 'transaction', 'a run is requested in your transaction on the PostgreSQL backend only', `run now of ${job}`);
    await this.connect();
    const now = view.clock.now();
    const request: RunRequest = { id: randomUUID(), job, requestedAt: now, requestedBy: view.holder.acquirer, state: 'pending', nudge: 0, expiresAt: now + timeoutMs };
    await store.createIn(transaction, request);
    return { requestId: request.id, job, expiresAt: request.expiresAt };
  }

  /** Polls the request until the node that ran it wrote how the run ended, for at most `waitMs`. */
  private async awaitEnd(id: string, waitMs: number): Promise<Pick<RunNowResult, 'outcome' | 'durationMs' | 'error' | 'stack'>> {
    const deadline = performance.now() + waitMs;
    for (let wait = POLL_FIRST_MS; ; wait = Math.min(POLL_MAX_MS, wait * 2)) {
      const finished = (await this.parts.store.read(id, this.parts.storeTimeoutMs))?.request.finished;
      if (finished) return { outcome: finished.outcome, durationMs: finished.durationMs, ...(finished.error !== undefined && { error: finished.error }), ...(finished.stack !== undefined && { stack: finished.stack }) };
      const left = deadline - performance.now();
      if (left <= 0) return {};
      await sleep(Math.min(wait, left));
    }
  }

  private async awaitStart(request: RunRequest, timeoutMs: number): Promise<RunNowResult> {
    const { store, storeTimeoutMs } = this.parts;
    const deadline = performance.now() + timeoutMs;
    let wait = POLL_FIRST_MS;
    let nudgedAt = performance.now();
    for (;;) {
      // Past the deadline (a withdrawal that lost to a claim), still at a poll's pace while the claimant starts it.
      await sleep(Math.min(wait, Math.max(POLL_FIRST_MS, deadline - performance.now())));
      wait = Math.min(POLL_MAX_MS, wait * 2);
      const stored = await store.read(request.id, storeTimeoutMs);
      const started = stored?.request.started;
      if (started) return { requestId: request.id, job: request.job, node: started.node, instance: started.instance, token: started.token, startedAt: started.at };
      if (!stored) throw new RunNowRefusedError(request.job, 'NOT_STARTED', 'the request was removed before any node started it');
      if (performance.now() >= deadline) {
        const withdrawn = withdrawRequest(stored.request);
        if (withdrawn && (await store.compareAndSet(request.id, stored, withdrawn, storeTimeoutMs))) {
          throw new RunNowRefusedError(request.job, 'NOT_STARTED', `no node started it within ${timeoutMs} ms (the request is withdrawn and will not run)`);
        }
        continue; // claimed meanwhile: the next read says by whom
      }
      if (performance.now() - nudgedAt >= NUDGE_MS) {
        nudgedAt = performance.now();
        await store.compareAndSet(request.id, stored, { ...stored.request, nudge: stored.request.nudge + 1 }, storeTimeoutMs);
      }
    }
  }

  /** A request heard here: tried when eligibility says this node should; the claim happens under the job's permit. */
  private async heard(request: RunRequest): Promise<void> {
    if (this.trying.has(request.id)) return;
    const job = this.eligibility.toTry(request);
    if (!job) return;
    this.trying.add(request.id);
    try {
      const manual: ManualRun = { request: request.id, claim: (token) => this.claim(request.id, token) };
      await this.parts.runner.run(job, { kind: 'manual', manual }).catch((error: unknown) => {
        if (!manual.started) this.parts.log.warn(`run now of ${request.job} failed before it started: ${(error as Error).message}`);
      });
    } finally {
      this.trying.delete(request.id);
    }
  }

  /** Writes how the run of request `id` ended into it, if the requester still keeps it (it does while it waits). */
  private async finish(id: string, finished: NonNullable<RunRequest['finished']>): Promise<void> {
    await this.parts.store.update(id, (current) => {
      if (!current || current.state !== 'started' || current.finished) return { result: undefined };
      return { result: undefined, next: { ...current, finished } };
    }, this.bounds(`finish run request ${id}`));
  }

  /** Claims request `id` under the permit `token`: false when another node did, it was withdrawn, or races kept it. */
  private async claim(id: string, token: number): Promise<boolean> {
    const { view } = this.parts;
    const claimant = { node: view.holder.acquirer, instance: view.holder.instance, token };
    return this.parts.store.update(id, (current) => {
      const next = claimRequest(current, claimant, view.clock.now(), view.clockSkewMs);
      return typeof next === 'string' ? { result: false } : { result: true, next };
    }, this.bounds(`claim run request ${id}`)).catch((error: unknown) => {
      if (error instanceof WriteConflictError) return false;
      throw error;
    });
  }

  private bounds(what: string): { attempts: number; deadline: Deadline } {
    return { attempts: CLAIM_ATTEMPTS, deadline: new Deadline(this.parts.storeTimeoutMs * CLAIM_ATTEMPTS, what) };
  }
}

/** What this node knows of its jobs, their semaphores and the cluster, as run-now eligibility reads it (no round trip). */
export interface RunNowView {
  /** This node's jobs by name, and all of them, sorted (to name them in a refusal). */
  readonly jobs: { get(name: string): ScheduledJob | undefined; all(): readonly ScheduledJob[] };
  /** This node's view of the semaphores: one read per semaphore a decision is about. */
  readonly semaphores: { peek(semaphore: string): { readonly entry?: Pick<SemaphoreEntry, 'definition' | 'permits' | 'graceUntil'> } | undefined };
  /** Presence, when it is on: the live app instances while its view is confirmed (recently), else `undefined`. */
  readonly presence?: { confirmed(): readonly NodeIdentity[] | undefined };
  /** This node. */
  readonly holder: Holder;
  /** The module's clock (requests' times) and the permits' clock (recovery waits), and the skew allowed between nodes. */
  readonly clock: Clock;
  readonly permitClock: Clock;
  readonly clockSkewMs: number;
}

/**
 * Who may run a "run now", decided in one place: the requester refuses at once what no node could start (an unknown
 * job, a paused one, a permit kept by `lockAtLeastFor`, a recovery wait, no admitted live node), naming until when;
 * a node that hears the request tries it only when it has the job, its definition admits it, and no other node holds
 * the job's permit (the holder runs it). The claim itself is then decided under the permit, by compare-and-set.
 */
export class RunNowEligibility {
  constructor(private readonly view: RunNowView) {}

  /** The job a run now of `name` asks for, or the refusal to throw at the requester. */
  requested(name: string): ScheduledJob {
    const { view } = this;
    const registered = view.jobs.get(name);
    if (!registered) throw new RunNowRefusedError(name, 'UNKNOWN_JOB', `no job of that name on this node (${view.jobs.all().map((job) => job.name).join(', ') || 'it has none'})`);
    const { semaphore } = registered.options;
    const entry = view.semaphores.peek(semaphore)?.entry;
    const definition = entry?.definition ?? undefined;
    if (definition?.permits === 0) throw new RunNowRefusedError(name, 'PAUSED', `its semaphore "${semaphore}" is paused (permits: 0); resume it first`);
    if (registered.paused) throw new RunNowRefusedError(name, 'PAUSED', 'the runtime schedule is paused; resume it first');
    // Said at once, naming until when, rather than a request that waits out its timeout for a permit nobody can get.
    const held = livePermits(entry?.permits ?? [], view.permitClock.now());
    if (definition && definition.permits > 0 && held.length >= definition.permits && held.every((p) => p.released)) {
      const until = Math.min(...held.map((p) => p.expiresAt));
      throw new RunNowRefusedError(name, 'LOCKED', `its last run released the permit of "${semaphore}" but keeps it until ${new Date(until).toISOString()} (lockAtLeastFor): no run starts before then; ask again after it`);
    }
    const graceUntil = entry?.graceUntil;
    if (graceUntil !== undefined && graceUntil + view.clockSkewMs > view.permitClock.now()) {
      throw new RunNowRefusedError(name, 'RECOVERING', `the cluster lost the data of "${semaphore}" and grants it again only after ${new Date(graceUntil + view.clockSkewMs).toISOString()} (the recovery wait that keeps two holders apart): no run starts before then`);
    }
    // This node has the job and is live: when its definition admits it, a node can run it, and presence need not be
    // read. Otherwise presence's confirmed view says whether any live node can (a view not confirmed: let it wait).
    const live = definition && admittedBy(definition, [view.holder]).length === 0 ? view.presence?.confirmed() : undefined;
    if (definition && live && admittedBy(definition, live).length === 0) {
      throw new RunNowRefusedError(name, 'NO_ELIGIBLE_NODE', `no live node matches "${semaphore}" (group ${definition.groupPattern}, acquirer ${definition.acquirerPattern}); live: ${live.map((p) => `${p.acquirer} (${p.group})`).join(', ') || 'none'}`);
    }
    return registered;
  }

  /** The job this node should try `request` for (pending, not about to expire, admitted, not held elsewhere), if any. */
  toTry(request: RunRequest): ScheduledJob | undefined {
    const { view } = this;
    if (request.state !== 'pending') return undefined;
    if (view.clock.now() >= request.expiresAt - view.clockSkewMs) return undefined;
    const job = view.jobs.get(request.job);
    if (!job) return undefined;
    const entry = view.semaphores.peek(job.options.semaphore)?.entry;
    const definition = entry?.definition;
    if (definition && admittedBy(definition, [view.holder]).length === 0) return undefined;
    const holders = livePermits(entry?.permits ?? [], view.permitClock.now());
    if (holders.length > 0 && !holders.some((p) => p.instance === view.holder.instance)) return undefined;
    return job;
  }
}

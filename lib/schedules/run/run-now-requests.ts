import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Deadline } from '../../core/deadline';
import { WriteConflictError } from '../../core/errors/write-conflict.error';
import { runFailure } from '../run-record';
import { RunNowRefusedError } from '../errors/run-now-refused.error';
import type { RunNowResult } from '../job-view';
import type { RunRequest } from '../run-request';
import type { RunRequestStore } from '../run-request-store';
import { claimRequest, withdrawRequest } from '../run-request.rules';
import type { JobRunner } from './job-runner';
import type { RunLog } from './run-log';
import { RunNowEligibility, type RunNowView } from './run-now-eligibility';
import type { ObservedRun, ObservedRunEnd } from './run-observer';
import type { RunPipelineObserver } from './run-observers';
import type { ManualRun } from './scheduled-job';

/** Tries of a claim of a request before this node leaves it to another (the requester's nudges make races). */
const CLAIM_ATTEMPTS = 5;
/** How often the requester looks at its request, at first and at most. */
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 200;
/**
 * The run-now requests' declared staleness policy: how often the requester bumps its pending request, while it waits
 * and only then (an idle cluster writes nothing). Every node hears requests from the feed and reads them all again
 * when it says changes may have been missed; the bump is for what that cannot give: a node that declined a request
 * (another held the job's permit) tries it again once the holder is gone, and a feed that loses events without telling
 * (Hazelcast: see `resyncEveryMs`) repeats it.
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

import { CorruptStateError } from '../core/errors/corrupt-state.error';
import type { Deadline } from '../core/deadline';
import type { RecordMap } from '../store/record-map';
import { MapHold } from '../store/map-hold';
import { updateRecord } from '../store/read-decide-write';
import type { StoreBackend } from '../store/store-backend';
import type { SqlTransaction } from '../store/sql-transaction';
import { invalidDefinition } from '../core/errors/input.errors';
import type { JobRunOutcome } from './run-record';

/*
 * "Run now" requests as the cluster keeps them, in one place: the record, its canonical text, the two transitions
 * that decide it (a claim and a withdrawal, exactly one of which wins), and its store on the record contract.
 */

/**
 * An operator's "run now" of a job, kept in the cluster until it is answered: `pending` until one node claims it
 * under its permit (`started`) or the requester withdraws it (`expired`). Exactly one of the two wins, by
 * compare-and-set, so a request runs at most once and never after its requester gave up on it.
 */
export interface RunRequest {
  readonly id: string;
  readonly job: string;
  readonly requestedAt: number;
  /** The acquirer name of the node that asked. */
  readonly requestedBy: string;
  readonly state: 'pending' | 'started' | 'expired';
  /** Bumped by the requester while pending, so every node hears of it again (events can be lost silently). */
  readonly nudge: number;
  /** No node starts it after this (its clock minus the skew bound); the requester withdraws it then. */
  readonly expiresAt: number;
  /** Who started it, under which permit, when. */
  readonly started?: { readonly node: string; readonly instance: string; readonly token: number; readonly at: number };
  /** How its run ended, written by the node that ran it (for a requester that waits for the outcome). */
  readonly finished?: { readonly outcome: JobRunOutcome; readonly durationMs: number; readonly error?: string; readonly stack?: string };
}

/** Canonical JSON (fixed key order), so a compare-and-set on the text read is reliable. */
export function encodeRequest(request: RunRequest): string {
  const started = request.started && { node: request.started.node, instance: request.started.instance, token: request.started.token, at: request.started.at };
  const finished = request.finished && { outcome: request.finished.outcome, durationMs: request.finished.durationMs, error: request.finished.error, stack: request.finished.stack };
  return JSON.stringify({
    id: request.id, job: request.job, requestedAt: request.requestedAt, requestedBy: request.requestedBy, state: request.state,
    nudge: request.nudge, expiresAt: request.expiresAt, started, finished,
  });
}

export function decodeRequest(key: string, raw: string): RunRequest {
  let value: Partial<RunRequest>;
  try {
    value = JSON.parse(raw) as Partial<RunRequest>;
  } catch (error) {
    throw new CorruptStateError(key, `run request: not JSON: ${(error as Error).message}`);
  }
  const ok = typeof value.id === 'string' && typeof value.job === 'string' && typeof value.requestedAt === 'number'
    && typeof value.requestedBy === 'string' && ['pending', 'started', 'expired'].includes(String(value.state))
    && typeof value.nudge === 'number' && typeof value.expiresAt === 'number';
  if (!ok) throw new CorruptStateError(key, 'run request: id, job, state or expiry missing');
  return value as RunRequest;
}

/** Who claims a request: the node that holds the job's permit, and the permit's token. */
export interface Claimant {
  readonly node: string;
  readonly instance: string;
  readonly token: number;
}

/**
 * The request once `claimant` starts it at `now`, or why it may not: only a pending request, and only before its
 * expiry less the skew bound (the requester may withdraw it at its own expiry, on a clock up to `skewMs` behind).
 */
export function claimRequest(request: RunRequest | undefined, claimant: Claimant, now: number, skewMs: number): RunRequest | string {
  if (!request) return 'withdrawn';
  if (request.state !== 'pending') return request.state;
  if (now >= request.expiresAt - skewMs) return 'expired';
  return { ...request, state: 'started', started: { ...claimant, at: now } };
}

/** The request withdrawn by its requester, or `undefined` when it is no longer pending (started, or gone). */
export function withdrawRequest(request: RunRequest | undefined): RunRequest | undefined {
  return request?.state === 'pending' ? { ...request, state: 'expired' } : undefined;
}

/** What one decision of {@link RunRequestStore.update} wants done: its result, and the request's next value if any. */
export interface RequestDecision<R> {
  readonly result: R;
  /** The request's next value; absent: nothing is written and `result` stands. */
  readonly next?: RunRequest;
}

/** A request as read, with the exact stored text a compare-and-set names. */
export interface StoredRequest {
  readonly request: RunRequest;
  readonly raw: string;
}

/** Where "run now" requests wait for a node: written by compare-and-set, heard by every node. */
export interface RunRequestStore {
  /** Opens the store; `heard` gets every request written (by any node) from then on. */
  connect(heard: (request: RunRequest) => void): Promise<void>;
  close(): Promise<void>;
  /** Writes a new request; false when its id is taken. */
  create(request: RunRequest, timeoutMs?: number): Promise<boolean>;
  /**
   * Writes a new request inside the application's own database transaction (optional: a store whose backend can,
   * the PostgreSQL one); nodes hear of it once that commits.
   */
  createIn?(transaction: SqlTransaction, request: RunRequest): Promise<boolean>;
  read(id: string, timeoutMs?: number): Promise<StoredRequest | undefined>;
  /** Writes `next` if the request is still the text of `expected`. */
  compareAndSet(id: string, expected: StoredRequest, next: RunRequest, timeoutMs?: number): Promise<boolean>;
  remove(id: string): Promise<void>;
  /**
   * Read, decide, compare-and-set, and on a conflict read and decide again (the store's one bounded loop), within
   * `attempts` and `deadline`; throws `WriteConflictError` when every attempt lost.
   */
  update<R>(id: string, decide: (current: RunRequest | undefined) => RequestDecision<R>, bounds: { attempts: number; deadline: Deadline }): Promise<R>;
}

/** The record map "run now" requests wait in, one record per request. */
export const RUN_REQUEST_MAP = 'job-requests';

/** Requests left behind by a requester that died are dropped by the store after this long (a garbage-collection aid). */
const REQUEST_TTL_MS = 60 * 60_000;

/**
 * "Run now" requests on any backend of the store contract: one canonical JSON record per request, written by
 * compare-and-set; every node watches the map (requests are rare, and each change carries its value, so a node
 * decides without asking), and reads every request again when the feed says changes may have been missed. The
 * requester removes its request once answered.
 */
export class RunRequestRecordStore implements RunRequestStore {
  private readonly hold: MapHold;

  constructor(private readonly backend: StoreBackend) {
    this.hold = new MapHold(backend, RUN_REQUEST_MAP, 'run request');
  }

  async connect(heard: (request: RunRequest) => void): Promise<void> {
    const hear = (id: string, raw: string) => {
      try {
        heard(decodeRequest(id, raw));
      } catch {
        // An unreadable request is nobody's to run.
      }
    };
    await this.hold.open({
      changed: (id, raw) => {
        if (raw !== null) hear(id, raw);
      },
      // Changes may have been missed: every request is read again and heard (as every view re-reads then), so one whose
      // event was lost is answered now, not at the requester's next nudge. Nothing to read while disconnected.
      missed: (reason) => {
        if (reason === 'disconnected') return;
        void this.hold.map().list().then((records) => {
          for (const { key, value } of records) hear(key, value);
        }).catch(() => undefined); // the requester's nudges still repeat its request
      },
    });
  }

  async close(): Promise<void> {
    await this.hold.close();
  }

  create(request: RunRequest, timeoutMs?: number): Promise<boolean> {
    return this.require().create(request.id, encodeRequest(request), { timeoutMs, ttlMs: REQUEST_TTL_MS });
  }

  createIn(transaction: SqlTransaction, request: RunRequest): Promise<boolean> {
    if (!this.backend.recordsIn) throw invalidDefinition(undefined, 'transaction', 'a run is requested in your transaction on the PostgreSQL backend only', `run now of ${request.job}`);
    return this.backend.recordsIn(transaction, RUN_REQUEST_MAP).create(request.id, encodeRequest(request), REQUEST_TTL_MS);
  }

  async read(id: string, timeoutMs?: number): Promise<StoredRequest | undefined> {
    const record = await this.require().get(id, { timeoutMs });
    return record && { raw: record.value, request: decodeRequest(id, record.value) };
  }

  compareAndSet(id: string, expected: StoredRequest, next: RunRequest, timeoutMs?: number): Promise<boolean> {
    return this.require().replace({ key: id, value: expected.raw }, encodeRequest(next), { timeoutMs });
  }

  update<R>(id: string, decide: (current: RunRequest | undefined) => RequestDecision<R>, bounds: { attempts: number; deadline: Deadline }): Promise<R> {
    return updateRecord(this.require(), id, (current) => {
      const decision = decide(current && decodeRequest(id, current.value));
      return decision.next === undefined ? { result: decision.result } : { result: decision.result, write: encodeRequest(decision.next) };
    }, bounds);
  }

  async remove(id: string): Promise<void> {
    await this.require().delete(id);
  }

  private require(): RecordMap {
    return this.hold.map();
  }
}

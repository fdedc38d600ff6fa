import { CorruptStateError } from '../core/errors/corrupt-state.error';
import type { JobRunOutcome } from './run-record';

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

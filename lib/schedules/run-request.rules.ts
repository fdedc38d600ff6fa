import type { RunRequest } from './run-request';

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

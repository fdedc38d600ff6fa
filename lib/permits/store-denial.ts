import { CorruptStateError } from '../core/errors/corrupt-state.error';
import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { PermitDenied } from './acquire-result';
import { DenyReason } from './deny-reason';

/** A denial of `semaphore`. */
export function denied(semaphore: string, reason: DenyReason, message: string): PermitDenied {
  return { granted: false, semaphore, reason, message };
}

/**
 * Fails closed: a store that timed out, cannot be reached, refused for lack of quorum or holds an unreadable value
 * is a denial (`QUORUM_NOT_MET` for a quorum refusal, so a held permit is let go); anything else is rethrown.
 */
export function storeDenial(semaphore: string, error: unknown): PermitDenied {
  if (error instanceof StoreTimeoutError) return denied(semaphore, DenyReason.STORE_TIMEOUT, error.message);
  if (error instanceof QuorumLostError) return denied(semaphore, DenyReason.QUORUM_NOT_MET, error.message);
  if (error instanceof StoreUnavailableError) return denied(semaphore, DenyReason.STORE_UNAVAILABLE, error.message);
  if (error instanceof CorruptStateError) return denied(semaphore, DenyReason.CORRUPT_STATE, error.message);
  throw error;
}

/**
 * Why a permit was denied. Every denial carries one of these codes.
 *
 * - `UNKNOWN_SEMAPHORE`: no definition with that name.
 * - `GROUP_MISMATCH`: this node's group does not match the definition's `groupPattern`.
 * - `ACQUIRER_MISMATCH`: this node's acquirer does not match `acquirerPattern`.
 * - `PAUSED`: the definition has `permits: 0`.
 * - `NO_PERMIT_AVAILABLE`: every permit is held by others (or released but kept until `lockAtLeastFor`).
 * - `OVER_CAPACITY`: `permits` was lowered and this holder's permit is beyond the new count.
 * - `PERMIT_LOST`: a refresh named a permit that is no longer held (expired and taken, or released).
 * - `PERMIT_REVOKED`: an operator force-released or reset this holder's permit.
 * - `RECOVERING`: the semaphore's data was rebuilt after it may have been lost; nothing is granted until every
 *   permit of the lost state has lapsed.
 * - `MOVING`: the semaphore's state is moving between stores (`nestjs-gatekeeper store move`): nothing is granted on
 *   the store it moves to until the store it comes from has no live permit, nor on the store it left.
 * - `IN_USE`: this process already runs work under the semaphore's permit (a permit has one user at a time).
 * - `CONTENTION`: compare-and-set kept losing to concurrent writers; try on the next tick.
 * - `STORE_UNAVAILABLE`: the cluster could not be reached (fail closed).
 * - `STORE_TIMEOUT`: the cluster did not answer within the deadline the permit allows (a stalled member).
 * - `CORRUPT_STATE`: the stored entry is unreadable; an operator must repair it.
 * - `NOT_READY`: the module has not connected yet, or is shutting down.
 * - `QUORUM_NOT_MET`: fewer cluster members are visible than the `quorum` option asks for, or the members refused
 *   the call because their own split-brain protection is not met.
 */
export const DenyReason = {
  UNKNOWN_SEMAPHORE: 'UNKNOWN_SEMAPHORE',
  GROUP_MISMATCH: 'GROUP_MISMATCH',
  ACQUIRER_MISMATCH: 'ACQUIRER_MISMATCH',
  PAUSED: 'PAUSED',
  NO_PERMIT_AVAILABLE: 'NO_PERMIT_AVAILABLE',
  OVER_CAPACITY: 'OVER_CAPACITY',
  PERMIT_LOST: 'PERMIT_LOST',
  PERMIT_REVOKED: 'PERMIT_REVOKED',
  RECOVERING: 'RECOVERING',
  MOVING: 'MOVING',
  IN_USE: 'IN_USE',
  CONTENTION: 'CONTENTION',
  STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  STORE_TIMEOUT: 'STORE_TIMEOUT',
  CORRUPT_STATE: 'CORRUPT_STATE',
  NOT_READY: 'NOT_READY',
  QUORUM_NOT_MET: 'QUORUM_NOT_MET',
} as const;

/** One of the `DenyReason` codes. */
export type DenyReason = (typeof DenyReason)[keyof typeof DenyReason];

/** Denials that say nothing about the permit itself: a running job's lease keeps vouching until its expiry. */
export const TRANSIENT_DENIALS: ReadonlySet<DenyReason> = new Set<DenyReason>([
  DenyReason.CONTENTION,
  DenyReason.STORE_UNAVAILABLE,
  DenyReason.STORE_TIMEOUT,
  DenyReason.NOT_READY,
]);

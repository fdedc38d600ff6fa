/**
 * Why a permit was denied. Every denial carries one of these codes.
 *
 * - `UNKNOWN_SEMAPHORE`: no definition with that name.
 * - `GROUP_MISMATCH`: this node's group does not match the definition's `groupPattern`.
 * - `ACQUIRER_MISMATCH`: this node's acquirer does not match `acquirerPattern`.
 * - `PAUSED`: the definition has `permits: 0`.
 * - `NO_PERMIT_AVAILABLE`: every permit is held by other acquirers.
 * - `OVER_CAPACITY`: `permits` was lowered and this holder's permit is beyond the new count.
 * - `PERMIT_LOST`: a refresh named a permit that is no longer held (expired and taken, or released).
 * - `CONTENTION`: compare-and-set kept losing to concurrent writers; try on the next tick.
 * - `STORE_UNAVAILABLE`: the cluster could not be reached (fail closed).
 * - `CORRUPT_STATE`: the stored permit state is unreadable; an operator must repair it.
 * - `NOT_READY`: the module has not connected yet, or is shutting down.
 * - `QUORUM_NOT_MET`: fewer cluster members are visible than the `quorum` option asks for.
 */
export const DenyReason = {
  UNKNOWN_SEMAPHORE: 'UNKNOWN_SEMAPHORE',
  GROUP_MISMATCH: 'GROUP_MISMATCH',
  ACQUIRER_MISMATCH: 'ACQUIRER_MISMATCH',
  PAUSED: 'PAUSED',
  NO_PERMIT_AVAILABLE: 'NO_PERMIT_AVAILABLE',
  OVER_CAPACITY: 'OVER_CAPACITY',
  PERMIT_LOST: 'PERMIT_LOST',
  CONTENTION: 'CONTENTION',
  STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  CORRUPT_STATE: 'CORRUPT_STATE',
  NOT_READY: 'NOT_READY',
  QUORUM_NOT_MET: 'QUORUM_NOT_MET',
} as const;

/** One of the {@link DenyReason} codes. */
export type DenyReason = (typeof DenyReason)[keyof typeof DenyReason];

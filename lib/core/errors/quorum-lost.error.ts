import { StoreUnavailableError } from './store-unavailable.error';

/**
 * The members refused the call because their split-brain protection is not met: this node is on the smaller
 * side of a split (or too few members are up). Unlike a call that merely failed, it says the cluster this node
 * sees cannot decide, so a permit is denied `QUORUM_NOT_MET` and a held one is let go, as the `quorum` option does.
 */
export class QuorumLostError extends StoreUnavailableError {}

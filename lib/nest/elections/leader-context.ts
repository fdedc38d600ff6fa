import { AsyncLocalStorage } from 'node:async_hooks';
import type { LeaderLease } from '../../elections/leader-lease';

/** Carries the leadership lease of a running `@LeaderOnly` method (or `whileLeader` work) through its async calls. */
export const leaderContext = new AsyncLocalStorage<LeaderLease>();

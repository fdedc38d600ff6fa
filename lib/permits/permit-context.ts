import { AsyncLocalStorage } from 'node:async_hooks';
import type { PermitLease } from './permit-lease';

/** Carries the running job's lease through its async calls, as ShedLock's LockAssert does with a ThreadLocal. */
export const permitContext = new AsyncLocalStorage<PermitLease>();

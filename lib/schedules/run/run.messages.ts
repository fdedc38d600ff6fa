import type { PermitDenied } from '../../permits/acquire-result';
import type { Permit } from '../../permits/permit';
import { LATE_DECISION, type LateDecision } from '../late-tick.rules';

/** What the runner says in the log, as small functions (the Nest layer's lines are in `gatekeeper.messages.ts`). */
export const runMessages = {
  stoppedOnLostPermit: (where: string, error: Error) => `${where} stopped: ${error.message}`,
  replacedRun: (where: string) => `${where}: its run stopped, replaced by the next tick (overlap: replace)`,
  lateDecision: (where: string, instant: number, late: LateDecision) =>
    `${where} skipped (${LATE_DECISION}): its permit decision landed ${late.lateByMs} ms after ${late.from === 'call' ? 'the call' : 'its instant'} ` +
    `${new Date(instant).toISOString()}, more than half its period of ${late.periodMs} ms (a slow or frozen store, or this process stalled); ` +
    'the next tick runs it, not this one back to back with it',
  overlap: (where: string) => `${where} skipped: its previous run on this node is still in progress`,
  notAFireInstant: (where: string, expression: string, zone: string | undefined, at: number) =>
    `${where} skipped: the cron package fired at ${new Date(at).toISOString()}, which is not a fire instant of ${JSON.stringify(expression)} in ${zone ?? 'the process time zone'} (a daylight-saving shift; see docs/time-zones.md)`,
  notReplaced: (where: string, waitMs: number) =>
    `${where}: the running run was told to stop (overlap: replace) but did not end within ${waitMs} ms; this tick is skipped, and it keeps running`,
  lost: (where: string, denied: PermitDenied) =>
    `${where} no longer runs on this node: ${denied.reason} (${denied.message}; semaphore "${denied.semaphore}")`,
  granted: (where: string, permit: Permit) =>
    `${where} now runs on this node (semaphore "${permit.semaphore}", fencing token ${permit.fencingToken}, until ${new Date(permit.expiresAt).toISOString()})`,
  skipped: (where: string, denied: PermitDenied) => `${where} skipped: ${denied.reason} (${denied.message})`,
  /** A tick denied `IN_USE`: said once per job at the default level, since it is the setup, not a passing state. */
  inUse: (where: string, denied: PermitDenied, permits: number | undefined) =>
    `${where} skipped: ${denied.message} (${denied.reason}). Work that shares semaphore "${denied.semaphore}" shares its permit` +
    `${permits === 1 ? `, and while this node holds its only permit no node runs ${where}` : ''}. Give ${where} a semaphore of its own. ` +
    `Said once; every tick skipped so is counted in the history and in job_ticks_skipped_total (reason ${denied.reason})`,
};

/**
 * The fractions of a lease (a permit's duration) the library's timings are made of, named once: every capability
 * that renews, answers from what it knows, or looks again does so at these points of its lease.
 */

/** A holder renews its lease when a third of it has passed: two more renewals fit before it could lapse. */
export const RENEW_FRACTION = 1 / 3;

/**
 * A holder answers from what it knows, without a round trip, only while more than half of its permit is left (beyond
 * the clock-skew bound): the refresh it skips is then written well before anyone else could take the permit.
 */
export const ANSWER_FROM_VIEW_FRACTION = 1 / 2;

/** One decision's calls may take at most a quarter of the duration (and never longer than the store's timeout). */
export const DECISION_BUDGET_FRACTION = 1 / 4;

/** A node gives way to the incumbent for at most a tenth of the duration (and the configured head start). */
export const HEAD_START_FRACTION = 1 / 10;

/** When the next renewal of a lease of `durationMs` is due, with `leftMs` of it left: a third in, never past half of what is left. */
export function renewDelayMs(durationMs: number, leftMs: number, maxMs: number): number {
  return Math.max(10, Math.min(Math.floor(durationMs * RENEW_FRACTION), Math.floor(leftMs / 2), maxMs));
}

/** How long a node waits before it tries again or looks anyway, with a lease of `leaseMs`: a renewal's interval. */
export function retryIntervalMs(leaseMs: number): number {
  return Math.max(10, Math.floor(leaseMs * RENEW_FRACTION));
}

/** Whether a permit expiring at `expiresAt` still has more than the fraction answers from the view need. */
export function answersFromView(expiresAt: number, skewMs: number, now: number, durationMs: number): boolean {
  return expiresAt - skewMs - now > durationMs * ANSWER_FROM_VIEW_FRACTION;
}

/** A decision's deadline with a lease of `durationMs` (when known) and the store's own timeout. */
export function decisionBudgetMs(durationMs: number | undefined, storeTimeoutMs: number): number {
  return durationMs === undefined ? storeTimeoutMs : Math.min(storeTimeoutMs, Math.max(1, Math.floor(durationMs * DECISION_BUDGET_FRACTION)));
}

/**
 * Work (a run, a leadership) starts only with a quarter of its lease left after the clock-skew bound: less means the
 * decision or the process stalled, and the work could outlive the lease before its first renewal.
 */
export const START_MARGIN_FRACTION = 1 / 4;

/** Whether a lease from `refreshedAt` to `expiresAt` leaves enough at `now` to start work on (see {@link START_MARGIN_FRACTION}). */
export function leavesEnoughToStart(lease: { readonly expiresAt: number; readonly refreshedAt: number }, now: number, skewMs: number): boolean {
  return lease.expiresAt - skewMs - now >= Math.floor((lease.expiresAt - lease.refreshedAt) * START_MARGIN_FRACTION);
}

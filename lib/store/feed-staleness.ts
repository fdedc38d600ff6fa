import type { StoreBackend } from './store-backend';

/**
 * How often a view needs a full re-read on a feed that can lose events without telling, in ms (the bound the
 * PostgreSQL and Redis feeds' own checks give).
 */
export const SILENT_LOSS_RESYNC_MS = 5_000;

/**
 * The staleness policy of an event-fed view on `backend`, the one rule every view follows: `undefined` where the
 * feed tells every loss (`StoreBackend.feedTellsEveryLoss`: re-read when it says `missed`, no timer), else how often
 * to re-read whatever it says ({@link SILENT_LOSS_RESYNC_MS}). Asked once the backend is open.
 */
export function resyncEveryMs(backend: Pick<StoreBackend, 'feedTellsEveryLoss'>): number | undefined {
  return backend.feedTellsEveryLoss === true ? undefined : SILENT_LOSS_RESYNC_MS;
}

import type { StoreBackend } from './store-backend';

/**
 * The backends whose change feed tells every loss of events with `missed(reason)`: memory loses none, and PostgreSQL
 * and Redis check their feed connection every `listenCheckMs` (5 s by default) and say `disconnected` / `reconnected`
 * when it failed or went deaf. A view on them is re-read when told, and needs no timer of its own.
 */
const TELLING_FEEDS: ReadonlySet<string> = new Set(['memory', 'postgres', 'redis']);

/**
 * How often a view needs a full re-read on a feed that can lose events without telling, in ms (the bound the
 * PostgreSQL and Redis feeds' own checks give).
 */
export const SILENT_LOSS_RESYNC_MS = 5_000;

/**
 * The staleness policy of an event-fed view on `backend`, the one rule every view follows: `undefined` where the
 * feed tells every loss (re-read when it says `missed`, no timer), else how often to re-read whatever it says. A
 * Hazelcast client that reconnects one member's connection on its own loses that member's events with no lifecycle
 * event (HAZELCAST.md), and a backend of another kind is not known to tell: both get {@link SILENT_LOSS_RESYNC_MS}.
 */
export function resyncEveryMs(backend: Pick<StoreBackend, 'kind'>): number | undefined {
  return TELLING_FEEDS.has(backend.kind) ? undefined : SILENT_LOSS_RESYNC_MS;
}

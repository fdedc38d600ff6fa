import type { EarlierLife } from '../core/errors/cluster-not-new.error';
import type { SemaphoreEntry } from './semaphore-entry';

/**
 * Declaring a store new (`nestjs-gatekeeper store init`), the semaphores' part, pure. A brand-new Hazelcast cluster
 * and one that restarted and lost its data look the same from inside (open-source members keep nothing across a
 * restart), so the library makes every first grant wait out the permits a lost state could have handed out. An
 * operator who knows the cluster is new may lift that wait, but only while nothing in it shows an earlier life:
 * these rules read the semaphores' entries and notes and say whether they do (the partitions' canaries are the
 * Hazelcast backend's own: `hazelcast-canary.rules.ts`).
 */

/**
 * The signs of an earlier life in one semaphore entry: a permit was ever granted under it (its last token), or
 * it was rebuilt by a node that remembered an earlier entry (the data was lost, not never written).
 */
export function earlierLifeOf(where: string, entry: SemaphoreEntry): EarlierLife | undefined {
  if (entry.lastToken > 0 || entry.permits.length > 0) {
    return { where, reason: `permits were granted under it (last fencing token ${entry.lastToken})` };
  }
  if (entry.rebuilt && entry.rebuilt.fromRevision > 0) {
    return { where, reason: 'it was rebuilt by a node that knew it before its data was lost' };
  }
  if (entry.graceUntil !== undefined && !entry.rebuilt) {
    return { where, reason: 'an operator reset it after its value was unreadable; its wait protects whoever held that value' };
  }
  return undefined;
}

/**
 * How much earlier than a rebuild's loss a note must be to show an earlier entry: the nodes' clocks differ (a note is
 * stamped by its writer, a loss by the canaries' or a node's clock), and a cluster's first creators write their notes
 * just after the first start.
 */
export const NOTE_MARGIN_MS = 60_000;

/**
 * The sign of an earlier life in a semaphore the cluster notes as having had an entry since `notedAt` (map
 * `semaphore-keys`, written after an entry's first write landed): its entry is gone, or was rebuilt after a loss that
 * came after the note. A cluster that lost everything loses its notes too, so a note older than the entry means the
 * entry alone went: the cluster is not new, and the rebuild's wait must stay. A note written after a first start's
 * rebuild (its first creators' entries wait too) is no sign.
 */
export function noteEvidence(where: string, notedAt: number | undefined, entry: SemaphoreEntry | undefined): EarlierLife | undefined {
  if (!entry) return { where, reason: 'the cluster notes it had an entry, and the entry is gone (it was lost, not never made)' };
  if (entry.rebuilt && (notedAt === undefined || notedAt < entry.rebuilt.lostSince - NOTE_MARGIN_MS)) {
    return { where, reason: 'the cluster noted an entry of it before the loss this one was rebuilt after' };
  }
  return undefined;
}

/**
 * The entry with the recovery wait lifted, or `undefined` when it has none to lift. Only for an entry with no
 * sign of an earlier life: its wait was set because the cluster looked restarted, and it is not.
 */
export function withoutRecoveryWait(entry: SemaphoreEntry): Omit<SemaphoreEntry, 'writeId'> | undefined {
  if (entry.graceUntil === undefined && entry.rebuilt === undefined) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { graceUntil, rebuilt, writeId, ...rest } = entry;
  return { ...rest, revision: entry.revision + 1 };
}

import { randomUUID } from 'node:crypto';
import type { Client, IMap } from 'hazelcast-client';
import type { Clock } from '../../../core/clock';
import { CANARY_MAP, encodeCanary, readCanaries } from '../hazelcast-partition-canaries';
import { callWithDeadline } from '../store-call';
import { readDecideWrite, type RecordSlot } from '../../../store/read-decide-write';
import { ClusterNotNewError } from '../../../permits/errors/cluster-not-new.error';
import { canaryEvidence, earlierLifeOf, noteEvidence, withoutRecoveryWait, type EarlierLife } from '../../../permits/new-cluster.rules';
import { SEMAPHORE_KEYS_MAP, SEMAPHORE_MAP } from '../../../permits/permit-record.store';
import { decodeEntry, encodeEntry } from '../../../permits/semaphore-entry.codec';
import type { SemaphoreEntry } from '../../../permits/semaphore-entry';

/** What a declaration did. */
export interface NewClusterReport {
  /** The semaphore maps it read (every map prefix in the cluster). */
  readonly maps: readonly string[];
  /** Partitions whose canary it marked fresh (the rest already were). */
  readonly canariesMarked: number;
  /** The semaphores whose recovery wait it lifted, with when that wait would have ended (the writer's clock). */
  readonly waitsLifted: ReadonlyArray<{ readonly map: string; readonly semaphore: string; readonly wouldHaveWaitedUntil?: number }>;
}

const MAP_SERVICE = 'hz:impl:mapService';
const SEMAPHORE_MAP_SUFFIX = `.${SEMAPHORE_MAP}`;

interface Stored {
  readonly map: string;
  readonly name: string;
  readonly raw: string;
  readonly entry?: SemaphoreEntry;
}

/**
 * Declares the cluster `client` is connected to new, so that no semaphore waits for permits a lost state could
 * have granted: it never had one. Reads everything first and refuses with {@link ClusterNotNewError}, writing
 * nothing, when any map prefix's semaphores or the partitions' canaries show an earlier life (see
 * `new-cluster.rules.ts`). Then, in this order, each by compare-and-set against exactly what it checked:
 * 1. marks every canary fresh, so an entry created from then on waits for nothing; a canary that changed since it
 *    was read (a partition lost meanwhile) undoes the ones already marked and refuses;
 * 2. lifts the recovery wait of each semaphore that nodes created waiting, knowing nothing of an earlier one; an
 *    entry that changed since it was read is read again and lifted only if it still shows no earlier life, so a
 *    node that remembers the lost state and says so meanwhile keeps its wait.
 * Every call has the deadline `timeoutMs`, and fails as a store call does (see `store-call.ts`). What it cannot see
 * is an app instance cut off from the cluster that still holds a permit of a lost state: declare a cluster new only
 * when none ran against an earlier incarnation of it within the longest permit duration, and never just after a
 * restart.
 */
export async function declareNewCluster(client: Client, clock: Clock, timeoutMs = 30_000): Promise<NewClusterReport> {
  const call = <T>(what: string, operation: () => Promise<T>) => callWithDeadline(operation, timeoutMs, `store init: ${what}`);
  const maps = (await call('list the maps', () => client.getDistributedObjects()))
    .filter((o) => o.getServiceName() === MAP_SERVICE && o.getName().endsWith(SEMAPHORE_MAP_SUFFIX))
    .map((o) => o.getName())
    .sort();
  const canaries = await call('read the canaries', () => readCanaries(client));
  const stored: Stored[] = [];
  for (const map of maps) {
    const entries = await call(`read ${map}`, async () => (await client.getMap<string, string>(map)).entrySet());
    for (const [name, raw] of entries) stored.push({ map, name, raw, entry: decodeOrUndefined(name, raw) });
  }
  const evidence: EarlierLife[] = [...canaryEvidence(canaries.flatMap(({ canary }) => (canary ? [canary] : [])))];
  for (const s of stored) {
    const sign = signOf(s);
    if (sign) evidence.push(sign);
  }
  const noted = async (map: string) => call(`read ${notesOf(map)}`, async () => (await client.getMap<string, string>(notesOf(map))).entrySet());
  for (const map of maps) {
    for (const [name, note] of await noted(map)) {
      const sign = noteEvidence(`semaphore "${name}" (map ${map})`, notedAt(note), stored.find((s) => s.map === map && s.name === name)?.entry);
      if (sign) evidence.push(sign);
    }
  }
  if (evidence.length > 0) throw new ClusterNotNewError(evidence);

  const canaryMap = await call('open the canary map', () => client.getMap<string, string>(CANARY_MAP));
  const fresh = encodeCanary({ createdAt: clock.now(), fresh: true });
  const marked: Array<{ key: string; raw: string | null }> = [];
  for (const { key, raw, canary } of canaries) {
    if (canary?.fresh) continue;
    const done = await call(`mark canary ${key}`, async () =>
      raw === null ? (await canaryMap.putIfAbsent(key, fresh)) === null : canaryMap.replaceIfSame(key, raw, fresh));
    if (!done) {
      await undoCanaries(canaryMap, marked, fresh, call);
      throw new ClusterNotNewError([{ where: 'canaries', reason: `the canary ${key} changed while store init ran (a partition lost its data?); nothing was changed` }]);
    }
    marked.push({ key, raw });
  }

  const waitsLifted: Array<NewClusterReport['waitsLifted'][number]> = [];
  const lift = async ({ map, name, raw, entry }: Stored) => {
    const imap = await call(`open ${map}`, () => client.getMap<string, string>(map));
    // No settle of a lost answer (no `holds`): the command fails and says so, and running it again is harmless.
    const slot: RecordSlot<Stored | null, string> = {
      read: async () => {
        const again = await call(`read "${name}"`, () => imap.get(name));
        return again === null ? null : { map, name, raw: again, entry: decodeOrUndefined(name, again) };
      },
      write: (current, value) => call(`lift the wait of "${name}"`, () => imap.replaceIfSame(name, current!.raw, value)),
    };
    const lifted = await readDecideWrite(`lift the recovery wait of "${name}" in ${map}`, slot, async (current) => {
      const entry = current?.entry;
      const next = entry?.rebuilt ? withoutRecoveryWait(entry) : undefined;
      if (!current || !entry || !next || signOf(current)) return { result: undefined }; // nothing to lift, or it shows an earlier life now: its wait stays
      // A rebuild the cluster notes an earlier entry of (noted since the first read): the loss was real, its wait stays.
      const note = (await noted(map)).find(([noted]) => noted === name)?.[1];
      if (note !== undefined && noteEvidence(name, notedAt(note), entry)) return { result: undefined };
      return { result: entry, write: encodeEntry({ ...next, writeId: randomUUID() }) };
    }, { known: { map, name, raw, entry } });
    if (lifted) waitsLifted.push({ map, semaphore: name, wouldHaveWaitedUntil: lifted.graceUntil });
  };
  for (const s of stored) await lift(s);
  // Entries created between the read and the canaries turning fresh were created waiting: lift those too.
  const seen = new Set(stored.map((s) => `${s.map}\u0000${s.name}`));
  for (const map of maps) {
    for (const [name, raw] of await call(`read ${map}`, async () => (await client.getMap<string, string>(map)).entrySet())) {
      if (!seen.has(`${map}\u0000${name}`)) await lift({ map, name, raw, entry: decodeOrUndefined(name, raw) });
    }
  }
  return { maps, canariesMarked: marked.length, waitsLifted };
}

/** When a note says its semaphore first had an entry (`undefined`: unreadable, which counts as early). */
function notedAt(note: string): number | undefined {
  try {
    const since = (JSON.parse(note) as { since?: unknown }).since;
    return typeof since === 'number' ? since : undefined;
  } catch {
    return undefined;
  }
}

/** The map of a semaphores map's notes of the names that had an entry (`<prefix>.semaphore-keys`). */
function notesOf(map: string): string {
  return `${map.slice(0, -SEMAPHORE_MAP.length)}${SEMAPHORE_KEYS_MAP}`;
}

function decodeOrUndefined(name: string, raw: string): SemaphoreEntry | undefined {
  try {
    return decodeEntry(name, raw);
  } catch {
    return undefined;
  }
}

function signOf({ map, name, entry }: Stored): EarlierLife | undefined {
  const where = `semaphore "${name}" (map ${map})`;
  if (!entry) return { where, reason: 'its value cannot be read, so nothing shows it never held a permit' };
  return earlierLifeOf(where, entry);
}

/** Puts back the canaries this run marked, each only if it still holds what this run wrote. */
async function undoCanaries(
  map: IMap<string, string>,
  marked: ReadonlyArray<{ key: string; raw: string | null }>,
  fresh: string,
  call: <T>(what: string, operation: () => Promise<T>) => Promise<T>,
): Promise<void> {
  for (const { key, raw } of marked) {
    await call(`restore canary ${key}`, () => (raw === null ? map.remove(key, fresh) : map.replaceIfSame(key, fresh, raw)));
  }
}

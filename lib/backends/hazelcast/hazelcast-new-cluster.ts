import type { Client, IMap } from 'hazelcast-client';
import type { Clock } from '../../core/clock';
import { ClusterNotNewError, type EarlierLife } from '../../core/errors/cluster-not-new.error';
import { readDecideWrite, type RecordSlot } from '../../store/read-decide-write';
import type { NewStoreRules } from '../../store/new-store-rules';
import { canaryEvidence } from './hazelcast-canary.rules';
import { CANARY_MAP, encodeCanary, readCanaries } from './hazelcast-partition-canaries';
import { callWithDeadline } from './store-call';

/** What a declaration did. */
export interface NewClusterReport {
  /** The record maps it read (each rules' map, under every map prefix in the cluster). */
  readonly maps: readonly string[];
  /** Partitions whose canary it marked fresh (the rest already were). */
  readonly canariesMarked: number;
  /** The records whose recovery wait it lifted, with when that wait would have ended (the writer's clock). */
  readonly waitsLifted: ReadonlyArray<{ readonly map: string; readonly semaphore: string; readonly wouldHaveWaitedUntil?: number }>;
}

const MAP_SERVICE = 'hz:impl:mapService';

/** One record as read, with the rules of its map. */
interface Stored {
  readonly map: string;
  readonly name: string;
  readonly raw: string;
  readonly rules: NewStoreRules;
}

/**
 * Declares the cluster `client` is connected to new, so that no record waits for what a lost state could have
 * granted: it never had one. Which records and how to judge them, the capabilities tell (`rules`: the permits'
 * semaphores); the backend knows only maps and the partitions' canaries. Reads everything first and refuses with
 * {@link ClusterNotNewError}, writing nothing, when any map prefix's records or notes (see `NewStoreRules`) or the
 * partitions' canaries show an earlier life. Then, in this order, each by compare-and-set against exactly what it
 * checked:
 * 1. marks every canary fresh, so a record created from then on waits for nothing; a canary that changed since it
 *    was read (a partition lost meanwhile) undoes the ones already marked and refuses;
 * 2. lifts the recovery wait of each record that nodes created waiting, knowing nothing of an earlier one; a record
 *    that changed since it was read is read again and lifted only if it still shows no earlier life, so a node that
 *    remembers the lost state and says so meanwhile keeps its wait.
 * Every call has the deadline `timeoutMs`, and fails as a store call does (see `store-call.ts`). What it cannot see
 * is an app instance cut off from the cluster that still holds a permit of a lost state: declare a cluster new only
 * when none ran against an earlier incarnation of it within the longest permit duration, and never just after a
 * restart.
 */
export async function declareNewCluster(client: Client, clock: Clock, rules: readonly NewStoreRules[], timeoutMs = 30_000): Promise<NewClusterReport> {
  const call = <T>(what: string, operation: () => Promise<T>) => callWithDeadline(operation, timeoutMs, `store init: ${what}`);
  const names = (await call('list the maps', () => client.getDistributedObjects())).filter((o) => o.getServiceName() === MAP_SERVICE).map((o) => o.getName());
  const judged = names.flatMap((map) => rules.filter((r) => map.endsWith(`.${r.map}`)).map((r) => ({ map, rules: r }))).sort((a, b) => (a.map < b.map ? -1 : a.map > b.map ? 1 : 0));
  const canaries = await call('read the canaries', () => readCanaries(client));
  const stored: Stored[] = [];
  for (const { map, rules: r } of judged) {
    const entries = await call(`read ${map}`, async () => (await client.getMap<string, string>(map)).entrySet());
    for (const [name, raw] of entries) stored.push({ map, name, raw, rules: r });
  }
  const where = (map: string, r: NewStoreRules, name: string) => `${r.noun} "${name}" (map ${map})`;
  const evidence: EarlierLife[] = [...canaryEvidence(canaries.flatMap(({ canary }) => (canary ? [canary] : [])))];
  for (const s of stored) {
    const sign = s.rules.earlierLife(where(s.map, s.rules, s.name), s.name, s.raw);
    if (sign) evidence.push(sign);
  }
  const notesOf = (map: string, r: NewStoreRules) => `${map.slice(0, -r.map.length)}${r.notes}`;
  const noted = async (map: string, r: NewStoreRules) => call(`read ${notesOf(map, r)}`, async () => (await client.getMap<string, string>(notesOf(map, r))).entrySet());
  for (const { map, rules: r } of judged) {
    for (const [name, note] of await noted(map, r)) {
      const sign = r.notedEarlier(where(map, r, name), name, note, stored.find((s) => s.map === map && s.name === name)?.raw ?? null);
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
  const lift = async ({ map, name, raw, rules: r }: Stored) => {
    const imap = await call(`open ${map}`, () => client.getMap<string, string>(map));
    // No settle of a lost answer (no `holds`): the command fails and says so, and running it again is harmless.
    const slot: RecordSlot<string | null, string> = {
      read: () => call(`read "${name}"`, () => imap.get(name)),
      write: (current, value) => call(`lift the wait of "${name}"`, () => imap.replaceIfSame(name, current!, value)),
    };
    const lifted = await readDecideWrite(`lift the recovery wait of "${name}" in ${map}`, slot, async (current) => {
      const next = current === null ? undefined : r.lifted(name, current);
      if (!next) return { result: undefined }; // nothing to lift, or it shows an earlier life now: its wait stays
      // A rebuild the cluster notes an earlier record of (noted since the first read): the loss was real, its wait stays.
      const note = (await noted(map, r)).find(([key]) => key === name)?.[1];
      if (note !== undefined && r.notedEarlier(name, name, note, current)) return { result: undefined };
      return { result: next, write: next.value };
    }, { known: raw });
    if (lifted) waitsLifted.push({ map, semaphore: name, wouldHaveWaitedUntil: lifted.waitedUntil });
  };
  for (const s of stored) await lift(s);
  // Records created between the read and the canaries turning fresh were created waiting: lift those too.
  const seen = new Set(stored.map((s) => `${s.map}\u0000${s.name}`));
  for (const { map, rules: r } of judged) {
    for (const [name, raw] of await call(`read ${map}`, async () => (await client.getMap<string, string>(map)).entrySet())) {
      if (!seen.has(`${map}\u0000${name}`)) await lift({ map, name, raw, rules: r });
    }
  }
  return { maps: judged.map((j) => j.map), canariesMarked: marked.length, waitsLifted };
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

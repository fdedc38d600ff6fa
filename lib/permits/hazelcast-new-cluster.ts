import { randomUUID } from 'node:crypto';
import type { Client, IMap } from 'hazelcast-client';
import type { Clock } from '../core/clock';
import { markCanariesFresh, readCanaries } from '../hazelcast/hazelcast-partition-canaries';
import { ClusterNotNewError } from './errors/cluster-not-new.error';
import { canarySpread, earlierLifeOf, withoutRecoveryWait, type EarlierLife } from './new-cluster.rules';
import { decodeEntry, encodeEntry } from './semaphore-entry.codec';

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
const SEMAPHORE_MAP_SUFFIX = '.semaphores';
const MAX_ATTEMPTS = 20;

/**
 * Declares the cluster `client` is connected to new, so that no semaphore waits for permits a lost state could
 * have granted: it never had one. Refuses with {@link ClusterNotNewError}, writing nothing, when any map prefix's
 * semaphores show an earlier life (see `new-cluster.rules.ts`). Otherwise lifts the waits of the semaphores nodes
 * created meanwhile (each by compare-and-set, re-checked as it is then), marks every partition's canary fresh,
 * and lifts the waits of any created before the canaries turned. The one thing it cannot see is an app instance
 * cut off from the cluster that still holds a permit of a lost state: declare a cluster new only when none ran
 * against an earlier incarnation within the longest permit duration.
 */
export async function declareNewCluster(client: Client, clock: Clock): Promise<NewClusterReport> {
  const maps = (await client.getDistributedObjects())
    .filter((o) => o.getServiceName() === MAP_SERVICE && o.getName().endsWith(SEMAPHORE_MAP_SUFFIX))
    .map((o) => o.getName())
    .sort();
  const canaries = await readCanaries(client);
  const evidence: EarlierLife[] = [];
  const spread = canarySpread(canaries.flatMap(({ canary }) => (canary && !canary.fresh ? [canary.createdAt] : [])));
  if (spread) evidence.push(spread);
  for (const name of maps) evidence.push(...(await scan(await client.getMap<string, string>(name), name)).evidence);
  if (evidence.length > 0) throw new ClusterNotNewError(evidence);

  const waitsLifted: Array<NewClusterReport['waitsLifted'][number]> = [];
  const liftAll = async () => {
    for (const name of maps) waitsLifted.push(...(await lift(await client.getMap<string, string>(name), name)));
  };
  await liftAll();
  const canariesMarked = await markCanariesFresh(client, clock.now());
  // Entries created between the first pass and the canaries turning fresh were created waiting.
  await liftAll();
  return { maps, canariesMarked, waitsLifted };
}

async function scan(map: IMap<string, string>, mapName: string): Promise<{ evidence: EarlierLife[] }> {
  const evidence: EarlierLife[] = [];
  for (const [name, raw] of await map.entrySet()) {
    const sign = signOf(mapName, name, raw);
    if (sign) evidence.push(sign);
  }
  return { evidence };
}

function signOf(mapName: string, name: string, raw: string): EarlierLife | undefined {
  const where = `${mapName.slice(0, -SEMAPHORE_MAP_SUFFIX.length)} "${name}"`;
  try {
    return earlierLifeOf(where, decodeEntry(name, raw));
  } catch {
    return { where, reason: 'its value cannot be read, so nothing shows it never held a permit' };
  }
}

/** Lifts the wait of every entry of `map` that has one, each by compare-and-set against the value just read. */
async function lift(map: IMap<string, string>, mapName: string): Promise<NewClusterReport['waitsLifted'][number][]> {
  const lifted: NewClusterReport['waitsLifted'][number][] = [];
  for (const [name] of await map.entrySet()) {
    for (let attempt = 1; ; attempt++) {
      const raw = await map.get(name);
      if (raw === null) break;
      const sign = signOf(mapName, name, raw);
      if (sign) throw new ClusterNotNewError([sign]);
      const entry = decodeEntry(name, raw);
      const next = withoutRecoveryWait(entry);
      if (!next) break;
      if (await map.replaceIfSame(name, raw, encodeEntry({ ...next, writeId: randomUUID() }))) {
        lifted.push({ map: mapName, semaphore: name, wouldHaveWaitedUntil: entry.graceUntil });
        break;
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error(`${mapName} "${name}": still changing after ${MAX_ATTEMPTS} attempts; run cluster init again`);
    }
  }
  return lifted;
}

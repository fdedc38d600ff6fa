import type { Client, IMap } from 'hazelcast-client';
import type { Clock } from '../../core/clock';
import type { ClusterCall } from './store-call';

/** The cluster-wide map of canaries (one per partition, shared by every map prefix: partitions are cluster-wide). */
export const CANARY_MAP = '__gatekeeper.partition-canaries';
/** Canary keys are the first `gatekeeper-canary-<n>` that land in each partition. */
const CANARY_KEY_PREFIX = 'gatekeeper-canary-';

/** A partition's canary: when it was first written, and whether whoever wrote it knew the cluster was new. */
export interface Canary {
  createdAt: number;
  fresh: boolean;
}

/**
 * Tells a never-written entry from a lost one. A partition whose primary and backups all die loses every key in
 * it, and a cluster restart loses all of them; nothing else in the data says so. Each partition holds a canary
 * key, written when the partition is first seen without one: a partition that lost its data lost its canary too.
 * So when an entry is absent, its partition's canary says since when its data is known intact: if that is
 * recent, an entry under that name may have existed and been lost, and whoever rebuilds it must wait out every
 * permit the lost one could have granted.
 *
 * A brand-new cluster looks exactly like a restarted one. Whoever starts a new cluster and knows no permit was
 * ever granted on it declares it new (`declareNewStore`: the canaries are marked `fresh`), as `store init`,
 * `hazelcast start`, the test setup and the sample do.
 *
 * Its methods make their calls through the `call` they are given: the store's, so each has the store's deadline and
 * failure mapping (see `store-call.ts`).
 */
export class PartitionCanaries {
  private keys: string[] = [];

  constructor(
    private readonly client: Client,
    private readonly map: IMap<string, string>,
    private readonly clock: Clock,
  ) {}

  /** Computes the canary keys and writes the canaries that are missing (at connect and after a reconnect). */
  async ensure(call: ClusterCall): Promise<void> {
    this.keys = canaryKeys(this.client);
    const present = await call(() => this.map.getAll(this.keys));
    const have = new Set(present.map(([key]) => key));
    const missing = this.keys.filter((key) => !have.has(key));
    const value = encode({ createdAt: this.clock.now(), fresh: false });
    await call(() => Promise.all(missing.map((key) => this.map.putIfAbsent(key, value))));
  }

  /** Marks `name`'s partition as intact only from now on (an entry in it vanished without the partition being lost). */
  async renew(name: string, call: ClusterCall): Promise<void> {
    if (this.keys.length === 0) this.keys = canaryKeys(this.client);
    const key = this.keys[this.client.getPartitionService().getPartitionId(name)];
    await call(() => this.map.set(key, encode({ createdAt: this.clock.now(), fresh: false })));
  }

  /**
   * Since when the data of `name`'s partition is known intact, or `undefined` when it always was (fresh canary).
   * A missing canary is written now: the partition was lost (or never seen), so from now on is all we know.
   */
  async intactSince(name: string, call: ClusterCall): Promise<number | undefined> {
    if (this.keys.length === 0) this.keys = canaryKeys(this.client);
    const key = this.keys[this.client.getPartitionService().getPartitionId(name)];
    let raw = await call(() => this.map.get(key));
    if (raw === null) {
      const mine = encode({ createdAt: this.clock.now(), fresh: false });
      raw = (await call(() => this.map.putIfAbsent(key, mine))) ?? mine;
    }
    const canary = decode(raw);
    return canary.fresh ? undefined : canary.createdAt;
  }
}

/** Each partition's canary as stored: `undefined` where none is, else when it was first written and whether fresh. */
export async function readCanaries(client: Client): Promise<Array<{ key: string; raw: string | null; canary?: Canary }>> {
  const map = await client.getMap<string, string>(CANARY_MAP);
  await map.size(); // any call: the partition table arrives with it
  const keys = canaryKeys(client);
  const stored = new Map(await map.getAll(keys));
  return keys.map((key) => {
    const raw = stored.get(key) ?? null;
    return raw === null ? { key, raw } : { key, raw, canary: decode(raw) };
  });
}

function canaryKeys(client: Client): string[] {
  const partitions = client.getPartitionService();
  const count = partitions.getPartitionCount();
  if (count === 0) throw new Error('the partition table has not arrived yet');
  const keys: string[] = new Array(count);
  let found = 0;
  for (let n = 0; found < count; n++) {
    const key = `${CANARY_KEY_PREFIX}${n}`;
    const id = partitions.getPartitionId(key);
    if (keys[id] === undefined) {
      keys[id] = key;
      found++;
    }
  }
  return keys;
}

/** A canary's stored form. */
export function encodeCanary(canary: Canary): string {
  return encode(canary);
}

function encode(canary: Canary): string {
  return JSON.stringify({ v: 1, createdAt: canary.createdAt, fresh: canary.fresh });
}

function decode(raw: string): Canary {
  try {
    const value = JSON.parse(raw) as Partial<Canary>;
    if (typeof value.createdAt === 'number') return { createdAt: value.createdAt, fresh: value.fresh === true };
  } catch {
    // fall through: an unreadable canary proves nothing, so it counts as just written
  }
  return { createdAt: Date.now(), fresh: false };
}

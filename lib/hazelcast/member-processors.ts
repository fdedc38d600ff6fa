import { Predicates, type DataInput, type DataOutput, type IdentifiedDataSerializable, type IMap } from 'hazelcast-client';

/**
 * The library's optional member-side processors (the Java sources in `member/src`, shipped as
 * `member/gatekeeper-member.jar`): what a Node client sends for them, and how it asks whether the members have them.
 * Only written here, never read back (the members answer with plain booleans), so the client needs no factory.
 */

/** The factory id the members register the jar's factory under ("GKP1"; `member/src/.../GatekeeperSerializers.java`). */
export const MEMBER_FACTORY_ID = 0x474b5031;
/** The members' factory class, as docs/tasks.md tells operators to register it. */
export const MEMBER_FACTORY_CLASS = 'io.github.nestjsgatekeeper.member.GatekeeperSerializers';

/** One compare-and-set: `expected` `null` creates, `next` `null` removes (as `putIfAbsent`, `replaceIfSame`, `remove`). */
export interface CompareAndSetWrite {
  readonly key: string;
  readonly expected: string | null;
  readonly next: string | null;
}

/**
 * Many compare-and-sets in one `executeOnKey` call (`CompareAndSetMany.java`): on the members, each write is a
 * single-key operation of its own, with the synchronous backups `replaceIfSame` has (`executeOnKeys` would back up
 * asynchronously: an acknowledged claim could die with its member). The answer lists whether each write landed.
 */
export class CompareAndSetMany implements IdentifiedDataSerializable {
  readonly factoryId = MEMBER_FACTORY_ID;
  readonly classId = 1;

  /** `json`: the values are JSON documents, stored as HazelcastJsonValue so indexes and predicates read them. */
  constructor(
    private readonly mapName: string,
    private readonly json: boolean,
    private readonly writes: readonly CompareAndSetWrite[],
  ) {}

  writeData(output: DataOutput): void {
    output.writeString(this.mapName);
    output.writeBoolean(this.json);
    output.writeInt(this.writes.length);
    for (const write of this.writes) {
      output.writeString(write.key);
      output.writeString(write.expected);
      output.writeString(write.next);
    }
  }

  readData(_input: DataInput): void {
    throw new Error('CompareAndSetMany is only sent to the members');
  }
}

/** Runs on no entry: a member that lacks the jar cannot read it, and the call fails (`Probe.java`). */
class Probe implements IdentifiedDataSerializable {
  readonly factoryId = MEMBER_FACTORY_ID;
  readonly classId = 2;
  writeData(_output: DataOutput): void {}
  readData(_input: DataInput): void {}
}

/**
 * Whether every member holding a partition of `map` can run the processors: a probe that matches no entry reaches
 * each member, and one without the jar answers that no factory is registered for the id.
 */
export async function probeMemberProcessors(map: IMap<string, unknown>): Promise<void> {
  await map.executeOnEntries(new Probe(), Predicates.alwaysFalse());
}

/** Whether a failed call failed because a member lacks the processors (no factory registered for their id). */
export function lacksMemberProcessors(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e.message.includes(String(MEMBER_FACTORY_ID)) || e.message.includes(MEMBER_FACTORY_CLASS)) return true;
  }
  return false;
}

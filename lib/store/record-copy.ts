import type { RecordCallOptions } from './record-map';
import { MapHold } from './map-hold';
import type { StoreBackend } from './store-backend';

/** What a copy of record maps did, per map. */
export interface RecordCopyReport {
  /** The map's name. */
  readonly map: string;
  /** Records created on the target (it had none under the key). */
  readonly created: number;
  /** Records whose text on the target differed, replaced by the source's. */
  readonly replaced: number;
  /** Records already the same on both. */
  readonly same: number;
}

/**
 * Copies every record of the maps `maps` from the backend `from` to the backend `to` (both open), as stored: the
 * source's text wins where the two differ, and records only the target has are kept. Each write is a compare-and-set
 * against what was read there, so a record a node wrote meanwhile is read and copied over again. For a move between
 * stores (`nestjs-gatekeeper store move`): schedules and run history are records the library encodes alike on every
 * backend.
 */
export async function copyRecords(from: StoreBackend, to: StoreBackend, maps: readonly string[], options: RecordCallOptions = {}): Promise<RecordCopyReport[]> {
  const reports: RecordCopyReport[] = [];
  for (const name of maps) {
    const source = new MapHold(from, name, 'source');
    const target = new MapHold(to, name, 'target');
    try {
      const records = await (await source.open()).list(options);
      const into = await target.open();
      let created = 0;
      let replaced = 0;
      let same = 0;
      for (const { key, value } of records) {
        for (let attempt = 0; ; attempt++) {
          const there = await into.get(key, options);
          if (there?.value === value) {
            same++;
            break;
          }
          const landed = there ? await into.replace(there, value, options) : await into.create(key, value, options);
          if (landed) {
            if (there) replaced++;
            else created++;
            break;
          }
          if (attempt >= 10) throw new Error(`copy of "${name}/${key}": the target's record kept changing under 10 attempts`);
        }
      }
      reports.push({ map: name, created, replaced, same });
    } finally {
      await source.close();
      await target.close();
    }
  }
  return reports;
}

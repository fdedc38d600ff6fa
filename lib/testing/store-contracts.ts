import { PermitRecordStore, SEMAPHORE_MAP } from '../permits/permit-record.store';
import { PRESENCE_MAP, PresenceRecordStore } from '../presence/presence-record.store';
import { HistoryRecordStore } from '../schedules/history-record.store';
import { SCHEDULE_MAP, ScheduleRecordStore } from '../schedules/schedule-record.store';
import { TASK_INDEXES, TASK_MAP, TaskRecordStore } from '../store/tasks/task-record.store';
import type { RecordMapSpec } from '../store/record-map';
import type { StoreBackend } from '../store/store-backend';
import { describeBackendContract, type BackendContractFixture } from './backend-contract';
import { describeHistoryStoreContract } from './history-store.contract';
import { describePermitStoreContract } from './permit-store.contract';
import { describePresenceStoreContract } from './presence-store.contract';
import { describeScheduleStoreContract } from './schedule-store.contract';
import { describeRankedClaimsContract } from './task-store-ranks.contract';
import { describeTaskStoreContract } from './task-store.contract';
import { testApi, type ContractOptions } from './test-api';

/**
 * The public contract suite: every promise of the store contract and of each capability store built on it, run
 * against a backend factory. It runs {@link describeBackendContract} (the primitives), then each capability's suite on
 * the stores the library builds over a backend, two of each on the two backends `setup` gives (two nodes):
 * `describePermitStoreContract` on `PermitRecordStore`, `describePresenceStoreContract` on
 * `PresenceRecordStore`, `describeHistoryStoreContract` on `HistoryRecordStore`,
 * `describeScheduleStoreContract` on `ScheduleRecordStore`, and {@link describeTaskStoreContract} and
 * {@link describeRankedClaimsContract} on `TaskRecordStore`. Every test calls `setup` for fresh backends, and closes
 * what it opened before the fixture's `close`. Values the library did not write are planted through the backend
 * itself (`put` on the capability's map), so the fixture is the one {@link describeBackendContract} takes.
 *
 * Runs under Jest (the globals) and under Node's own runner (`{ test: await import('node:test') }`):
 *
 * ```ts
 * import { describeStoreContracts } from 'nestjs-gatekeeper/testing';
 * describeStoreContracts('my store', async () => ({ backends: [new MyBackend(), new MyBackend()], close: async () => {} }));
 * ```
 */
export function describeStoreContracts(name: string, setup: () => Promise<BackendContractFixture>, options: ContractOptions = {}): void {
  const { describe } = testApi(options.test);
  describe(`store contracts: ${name}`, () => {
    describeBackendContract(name, setup, options);
    describePermitStoreContract(`PermitRecordStore on ${name}`, async () => {
      const { stores, plant, close } = await over(setup, (backend) => new PermitRecordStore(backend));
      return { stores, plant: (key, raw) => plant(SEMAPHORE_MAP, key, raw), close };
    }, options);
    describePresenceStoreContract(`PresenceRecordStore on ${name}`, async () => {
      const { stores, plant, close } = await over(setup, (backend) => new PresenceRecordStore(backend));
      return { stores, plant: (instance, raw) => plant(PRESENCE_MAP, instance, raw), close };
    }, options);
    describeHistoryStoreContract(`HistoryRecordStore on ${name}`, async () => {
      const { stores, close } = await over(setup, (backend) => new HistoryRecordStore(backend));
      return { stores, close };
    }, options);
    describeScheduleStoreContract(`ScheduleRecordStore on ${name}`, async () => {
      const { stores, plant, close } = await over(setup, (backend) => new ScheduleRecordStore(backend));
      return { stores, plant: (id, raw) => plant(SCHEDULE_MAP, id, raw), close };
    }, options);
    describeTaskStoreContract(`TaskRecordStore on ${name}`, async () => {
      const { stores, close } = await over(setup, (backend) => new TaskRecordStore(backend));
      return { stores, close };
    }, options);
    describeRankedClaimsContract(`TaskRecordStore on ${name}`, async () => {
      const { stores, plant, close } = await over(setup, (backend) => new TaskRecordStore(backend));
      // The tasks map is opened as the store opens it (with its indexes): a backend may keep such a map's values apart.
      return { stores, plant: (id, json) => plant(TASK_MAP, id, json, { indexes: TASK_INDEXES }), close };
    }, options);
  });
}

/** Two stores of one capability, one on each of a fresh fixture's backends, and a way to plant values through the first. */
interface StoresOver<S> {
  readonly stores: readonly [S, S];
  /** Stores `raw` under `key` in the map `map` as it is (`put`: no compare-and-set, no codec). */
  plant(map: string, key: string, raw: string, spec?: RecordMapSpec): Promise<void>;
  /** The fixture's close (each store closes the backend it opened itself). */
  close(): Promise<void>;
}

/** A fresh fixture from `setup`, with a store of one capability on each of its backends. */
async function over<S>(setup: () => Promise<BackendContractFixture>, store: (backend: StoreBackend) => S): Promise<StoresOver<S>> {
  const fixture = await setup();
  const [a, b] = fixture.backends;
  return {
    stores: [store(a), store(b)],
    async plant(map, key, raw, spec) {
      // An open of its own: the store shares the connection its own open made, and keeps it after this close.
      await a.open();
      try {
        await (await a.map(map, spec)).put(key, raw);
      } finally {
        await a.close();
      }
    },
    close: () => fixture.close(),
  };
}

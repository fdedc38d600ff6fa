import { describeLayout, liveLayout, optionsFor } from '../../lib/cli/cli-layout';
import { StoreNotGivenError } from '../../lib/cli/cli-errors';
import type { CliConnectionOptions } from '../../lib/cli/cli-reached-store';
import type { Presence } from '../../lib/presence/presence';
import { decodePresence, encodePresence } from '../../lib/presence/presence.codec';
import type { StoreLayout, StorePlace } from '../../lib/presence/store-place';

const pg: StorePlace = { kind: 'postgres', address: 'postgres://app@db:5432/app', schema: 'gatekeeper', prefix: 'gatekeeper' };
const redis: StorePlace = { kind: 'redis', address: 'redis://cache:6379', prefix: 'gatekeeper' };
const split: StoreLayout = { permits: redis, presence: pg, schedules: pg, history: pg, tasks: pg };
const allPg: StoreLayout = { permits: pg, presence: pg, schedules: pg, history: pg, tasks: pg };

const presence = (acquirer: string, stores?: StoreLayout): Presence => ({
  instance: `${acquirer}/1`, acquirer, group: 'default', startedAt: 1, version: '0.1.0', refreshedAt: 1, expiresAt: 2, ...(stores && { stores }),
});

const options = (over: Partial<CliConnectionOptions> = {}): CliConnectionOptions => ({
  backend: 'postgres', postgresUrl: 'postgres://ops@localhost:5432/app', postgresSchema: 'gatekeeper', members: ['127.0.0.1'], clusterName: 'dev', mapPrefix: 'gatekeeper', connectTimeout: 5_000, ...over,
});

describe('a node says where it keeps each capability, and the CLI follows it', () => {
  it('keeps the layout through its presence value, and refuses one it cannot read', () => {
    const written = presence('app-1', split);
    expect(decodePresence(written.instance, encodePresence(written))).toEqual(written);
    expect(decodePresence('app-1/1', encodePresence(presence('app-1')))).toEqual(presence('app-1'));
    const broken = JSON.parse(encodePresence(written));
    broken.stores.tasks = { address: 'x' };
    expect(decodePresence('app-1/1', JSON.stringify(broken))).toEqual({ unreadable: 'stores: tasks.kind is not a non-empty string' });
  });

  it('reads one layout from nodes that agree, none from nodes that say nothing, and names a dispute', () => {
    expect(liveLayout([presence('old')])).toBeUndefined();
    expect(liveLayout([presence('a', split), presence('b', split), presence('old')])).toEqual({ places: split, disputed: {}, nodes: 2 });
    const moving = liveLayout([presence('a', split), presence('b', allPg)])!;
    expect(moving.places).toEqual({ presence: pg, schedules: pg, history: pg, tasks: pg });
    expect(moving.disputed.permits).toBe('a on Redis at redis://cache:6379 (prefix gatekeeper); b on PostgreSQL at postgres://app@db:5432/app (schema gatekeeper, prefix gatekeeper)');
  });

  it('sends a capability to the store the nodes name, with their scope, through the URL the CLI has for that kind', () => {
    const layout = liveLayout([presence('a', { ...split, permits: { ...redis, prefix: 'billing-app' } })])!;
    expect(optionsFor('permits', layout, options({ redisUrl: 'redis://localhost:6379' }))).toMatchObject({ backend: 'redis', redisUrl: 'redis://localhost:6379', mapPrefix: 'billing-app' });
    expect(optionsFor('tasks', layout, options())).toMatchObject({ backend: 'postgres', postgresSchema: 'gatekeeper', mapPrefix: 'gatekeeper' });
  });

  it('refuses a store it was not given, one in the nodes\' memory, and a dispute, naming what to do', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(StoreNotGivenError);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refusal(() => optionsFor('permits', liveLayout([presence('a', split)])!, options()))).toBe(
      'the live nodes keep permits on Redis at redis://cache:6379 (prefix gatekeeper), which this command was not pointed at: give --redis-url (or GATEKEEPER_REDIS_URL)',
    );
    const memory: StorePlace = { kind: 'memory' };
    expect(refusal(() => optionsFor('tasks', liveLayout([presence('a', { ...split, tasks: memory })])!, options()))).toContain('in their own memory');
    expect(refusal(() => optionsFor('permits', liveLayout([presence('a', split), presence('b', allPg)])!, options({ redisUrl: 'redis://x:1' })))).toContain('a move between stores is under way');
  });

  it('says which store holds what, one line per store', () => {
    expect(describeLayout(liveLayout([presence('a', split)])!)).toEqual([
      'permits: Redis at redis://cache:6379 (prefix gatekeeper)',
      'presence, schedules, history, tasks: PostgreSQL at postgres://app@db:5432/app (schema gatekeeper, prefix gatekeeper)',
    ]);
  });
});

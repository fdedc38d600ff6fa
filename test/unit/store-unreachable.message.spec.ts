import { inspect } from 'node:util';
import { StoreUnreachableError, StoreUnavailableError } from '../../lib';
import { clusterUnreachable, hazelcastTargetSources } from '../../lib/backends/hazelcast/hazelcast-module-connection';
import { permitMessages } from '../../lib/permits/permits.messages';
import { resolveGatekeeperOptions } from '../../lib/nest/options/gatekeeper-options.resolver';

/** The one line start-up fails with when no member answers: what was tried, where it came from, the ways forward. */
describe('the start-up error without a cluster', () => {
  it('says where the members and cluster name came from', () => {
    expect(hazelcastTargetSources(resolveGatekeeperOptions({}).hazelcast, {})).toBe(
      'default members: GATEKEEPER_HZ_MEMBERS is not set; default cluster name: GATEKEEPER_HZ_CLUSTER_NAME is not set',
    );
    expect(hazelcastTargetSources(resolveGatekeeperOptions({}).hazelcast, { GATEKEEPER_HZ_MEMBERS: 'h:1', GATEKEEPER_HZ_CLUSTER_NAME: 'prod' })).toBe(
      'members from GATEKEEPER_HZ_MEMBERS; cluster name from GATEKEEPER_HZ_CLUSTER_NAME',
    );
    const configured = resolveGatekeeperOptions({ hazelcast: { clientConfig: { clusterName: 'mine', network: { clusterMembers: ['h:1'] } } } });
    expect(hazelcastTargetSources(configured.hazelcast, { GATEKEEPER_HZ_MEMBERS: 'other:1' })).toBe(
      'members from hazelcast.clientConfig; cluster name from hazelcast.clientConfig',
    );
  });

  it('gives the commands for the address it tried: a local default, a local port and name of its own, a remote cluster', () => {
    const sources = 'default members';
    const local = clusterUnreachable({ clusterName: 'dev', members: ['127.0.0.1:5701'], sources }, 30_000);
    expect(local).toContain('Cannot reach Hazelcast cluster "dev" at 127.0.0.1:5701 within 30s (default members). ');
    expect(local).toContain('(npx nestjs-gatekeeper hazelcast start, or docker run --rm -p 5701:5701 hazelcast/hazelcast:5.6.0)');
    expect(local).toContain("for a single instance, use backend: 'memory'; to boot now and deny every permit until connected, set connectInBackground: true");
    expect(local).not.toContain('\n');

    const own = clusterUnreachable({ clusterName: 'team', members: ['localhost:5800'], sources }, 2_000);
    expect(own).toContain('npx nestjs-gatekeeper --cluster-name team hazelcast start --port 5800, or docker run --rm -p 5800:5701 -e HZ_CLUSTERNAME=team hazelcast/hazelcast:5.6.0');

    const remote = clusterUnreachable({ clusterName: 'prod', members: ['10.0.0.1:5701', '10.0.0.2:5701'], sources }, 30_000);
    expect(remote).toContain('at 10.0.0.1:5701, 10.0.0.2:5701 within 30s');
    expect(remote).toContain('for a local one');
    expect(remote).toContain('point GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME at yours');
  });

  it('is a StoreUnavailableError that prints as its one line, without a stack', () => {
    const error = new StoreUnreachableError('Cannot reach Hazelcast cluster "dev"');
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.stack).toBe('StoreUnreachableError: Cannot reach Hazelcast cluster "dev"');
    expect(inspect(error)).toBe('[StoreUnreachableError: Cannot reach Hazelcast cluster "dev"]');
  });
});

describe('the lines of an outage and a recovery name the store in use', () => {
  it('PostgreSQL, Redis, the cluster, or a store of the user\'s', () => {
    expect(permitMessages.unavailable('PostgreSQL call failed', 'postgres')).toMatch(/^PostgreSQL unreachable: denying every permit/);
    expect(permitMessages.available('redis')).toBe('Redis reachable again: permits are granted as usual');
    expect(permitMessages.unavailable('x', 'hazelcast')).toMatch(/^Cluster unreachable/);
    expect(permitMessages.unavailable('x', undefined)).toMatch(/^Store unreachable/);
    expect(permitMessages.recovered('billing', 'postgres')).toContain('lost with the PostgreSQL database\'s data');
    expect(permitMessages.recovered('billing', 'hazelcast')).toContain('lost with the cluster\'s data');
  });
});

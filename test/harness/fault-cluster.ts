/*
 * The set-up every fault spec on its own cluster shares: start the members once for the describe block (declared
 * new: the spec started them, nothing was granted on them before), keep the node processes it starts, and stop
 * both afterwards. Also where each spec's history file lives.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'hazelcast-client';
import { ControlledCluster, type ControlledClusterOptions } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
import { partitionTableStable } from './key-owner';
import type { NodeProcess } from './node-process';

/** A cluster of a describe block's own, and the node processes started on it. */
export interface FaultCluster {
  /** The members (started in `beforeAll`). */
  readonly cluster: ControlledCluster;
  /** Node processes to stop after the block: push what you start. */
  readonly nodes: NodeProcess[];
  /**
   * An outside client of the cluster (an operator's script: removes, clears, reads who owns a key), started once the
   * partition table settled; only with `{ outside: true }`.
   */
  readonly outside: Client;
}

/** How the block's cluster is started. */
export interface FaultClusterOptions extends ControlledClusterOptions {
  /** Also start an outside client ({@link FaultCluster.outside}). */
  readonly outside?: boolean;
}

/** Starts `members` members before the block's tests and stops them, and every node pushed to `nodes`, after. */
export function useFaultCluster(members: number, { outside: withOutside = false, ...options }: FaultClusterOptions = {}): FaultCluster {
  let cluster: ControlledCluster | undefined;
  let outside: Client | undefined;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    cluster = await ControlledCluster.start(members, options);
    await declareFresh(cluster.clientConfig());
    if (withOutside) {
      outside = await Client.newHazelcastClient(cluster.clientConfig());
      await partitionTableStable(outside);
    }
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    await outside?.shutdown();
    await cluster?.quit();
  });
  const started = <T>(part: T | undefined, what: string): T => {
    if (!part) throw new Error(`the fault cluster's ${what} is started in beforeAll (with { outside: true } for the client): use it inside a test`);
    return part;
  };
  return {
    get cluster() {
      return started(cluster, 'members');
    },
    get outside() {
      return started(outside, 'outside client');
    },
    nodes,
  };
}

export function newHistoryFile(label: string): string {
  return join(mkdtempSync(join(tmpdir(), `gatekeeper-${label}-`)), 'history.jsonl');
}

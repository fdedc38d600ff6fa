/*
 * The set-up every fault spec on its own cluster shares: start the members once for the describe block (declared
 * new: the spec started them, nothing was granted on them before), keep the node processes it starts, and stop
 * both afterwards. Also where each spec's history file lives.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlledCluster, type ControlledClusterOptions } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
import type { NodeProcess } from './node-process';

/** A cluster of a describe block's own, and the node processes started on it. */
export interface FaultCluster {
  /** The members (started in `beforeAll`). */
  readonly cluster: ControlledCluster;
  /** Node processes to stop after the block: push what you start. */
  readonly nodes: NodeProcess[];
}

/** Starts `members` members before the block's tests and stops them, and every node pushed to `nodes`, after. */
export function useFaultCluster(members: number, options: ControlledClusterOptions = {}): FaultCluster {
  let cluster: ControlledCluster | undefined;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    cluster = await ControlledCluster.start(members, options);
    await declareFresh(cluster.clientConfig());
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    await cluster?.quit();
  });
  return {
    get cluster() {
      if (!cluster) throw new Error('the fault cluster is started in beforeAll: use it inside a test');
      return cluster;
    },
    nodes,
  };
}

/** A fresh history file for one test run. */
export function newHistoryFile(label: string): string {
  return join(mkdtempSync(join(tmpdir(), `gatekeeper-${label}-`)), 'history.jsonl');
}

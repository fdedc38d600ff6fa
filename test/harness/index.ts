/*
 * The fault harness: a nemesis, a workload of real processes writing a history, and a checker that reads only
 * the history (DESIGN.md, "Safety model"). Every capability's fault tests reuse it the same way:
 *
 *   1. Cluster. `ControlledCluster.start(3, { proxied: true })` runs members of your own, each behind a TcpProxy
 *      (members advertise the proxy to clients; member-to-member traffic is direct). Use `cluster.clientConfig()`
 *      / `cluster.addresses` for every client. The shared jest member (testCluster()) is fine for tests that
 *      fault only node processes. On PostgreSQL, `ControlledPostgres.start()` (test/support/postgres-control.ts)
 *      runs a server of your own, and nodes take `cluster: { postgresUrl: server.url }` (store-target.ts).
 *   2. Workload. `startWorkloadNode({ name, historyFile, jobs, cluster, mapPrefix, ... })` starts workload-app.ts
 *      as a real process: each job is a real `@ClusterSingleton` method ticking at aligned slots, and each run
 *      appends start / effect / abort / signal / end events. Other capabilities add a workload app of their own
 *      that writes the same run events (a leadership, a resource or a task claim is a lease too: `semaphore`
 *      names what is leased, `token` its fencing token or epoch) and start it with `startNodeProcess(script, ...)`:
 *      `startLeaderNode(...)` (leader-app.ts) writes each leadership term as a run and `report` events with what
 *      the node says about who leads and who is here (`ClusterService.status()`); `startAllocationNode(...)`
 *      (allocation-app.ts) writes each resource a node owns as a run (`<allocation>/<resource>`, token = its
 *      epoch) and `allocation` reports of what `AllocationService.status()` says.
 *      Operator actions go through `new Operator(historyFile, serviceOrAdmin)`, which records `edit` events.
 *   3. Nemesis. Members: `cluster.freeze(i)`, `resume(i)`, `kill(i)`, `killMany([i, j])`, `stop(i)`, `restart(i)`.
 *      Network: `cluster.proxy(i).delay(ms) | blackhole() | reset() | heal()`, each optionally `{ pid }` to hit one
 *      node process only, and `{ direction: 'toClient' }` to hold a member's answers and events while its
 *      requests still land (keysOwnedBy / ownerIndex aim at the member owning a key);
 *      `cluster.proxy(i).holdBackupAcks({ pid })` holds only the backup acknowledgements member i sends, so a
 *      write whose backup it keeps lands and its answer comes late while everything else flows. Nodes: `node.freeze()`,
 *      `resume()`, `kill()`, `terminate()`. PostgreSQL: `server.kill()` (the server and its backends SIGKILLed),
 *      `startAgain()`, `freeze()` / `resume()`, and one backend found by `backends(node, where)` then
 *      `terminate(pid)` or SIGSTOPped. Clocks: `clockOffsetMs` per node. Record what you inject with
 *      `recordNemesis(historyFile, action, target)` (node faults record themselves) to measure bounds from it.
 *   4. Check. `checkHistory(readHistory(historyFile), { permits, startMarginMs, minStartGapMs, edits })` returns
 *      violations (overlap, invalid-start, token-order, duplicate-tick, close-starts, lost-edit) and stats; assert
 *      `violations` is empty and print the stats. `gaps(events, from, to)` + `summarize` measure a bound (edit →
 *      signal, freeze → takeover) to compare with the figure in the Guarantees table (docs/guarantees.md).
 *
 * Use eventually() (test/support) rather than sleeps, and `within(promise, ms)` to show a call is stalled.
 * nemesis.spec.ts proves each fault against real members; workload.spec.ts and checker.spec.ts show the rest.
 */
export { ControlledCluster, type ControlledClusterOptions } from '../support/cluster-control';
export { ControlledPostgres } from '../support/postgres-control';
export { storeTargetEnv, type StoreTarget } from './store-target';
export { TcpProxy, type ProxyConnection, type ProxyDirection, type ProxyMode, type ProxyScope } from './tcp-proxy';
export { canResolvePids, localPortsOf, tcpSocketsOf, type ProcSocket } from './proc-net';
export { resetConnections } from './reset-connections';
export { keysOwnedBy, ownerIndex, partitionTableReady, partitionTableStable } from './key-owner';
export { within, type Within } from './deadline';
export { ProbeClient } from './probe-client';
export { startNodeProcess, startWorkloadNode, type NodeProcess } from './node-process';
export { checkAlerts, checkMissed, type AlertCheck, type MissedCheck } from './alerts';
export { workloadEnv, type WorkloadJob, type WorkloadSettings } from './workload';
export { leaderEnv, startLeaderNode, type LeaderNodeSettings } from './leader-app';
export { allocationEnv, resourceNames, startAllocationNode, type AllocationNodeSettings } from './allocation-app';
export { Operator, type Edit } from './operator';
export * from './history';
export { holderOf, runsOf, type Run } from './runs';
export { checkHistory, type CheckOptions, type CheckResult, type HistoryStats, type Violation, type ViolationKind } from './checker';
export { gaps, summarize, type Gap } from './bounds';
export { useFaultCluster, newHistoryFile, type FaultCluster, type FaultClusterOptions } from './fault-cluster';
export { startTaskNode, taskEnv, type TaskNodeSettings } from './task-app';

import type { Command } from 'commander';
import { readAllocation, readAllocations, requestRebalance, validateAllocationName } from '../allocation/allocation-admin';
import type { AllocationStatus } from '../allocation/allocation-status';
import type { Execute } from './cli-command';
import { formatAge } from './cli-cluster-format';
import { renderTable } from './cli-table';

/**
 * Adds the allocation commands: `allocations [name]` (who owns what, counts, skew, last rebalance) and
 * `rebalance <name>` (asks the allocation's coordinator for a rebalance). Read from the cluster, so exact.
 */
export function addAllocationCommands(program: Command, execute: Execute): void {
  program
    .command('allocations [name]')
    .description('show every allocation (nodes, resources, unowned, skew, last rebalance), or one with who owns what')
    .action((name?: string) =>
      execute(() => {
        if (name !== undefined) validateAllocationName(name);
        return async (_admin, stores) => {
          if (name === undefined) {
            const all = await readAllocations(stores.store, stores.clock);
            return { json: all, text: allocationsText(all) };
          }
          const one = await readAllocation(stores.store, name, stores.clock);
          return { json: one, text: allocationText(one) };
        };
      }),
    );

  program
    .command('rebalance <name>')
    .description('ask the coordinator of an allocation to re-read its resource set and rebalance (resources move only after their owner revoked them)')
    .action((name: string) =>
      execute(() => {
        validateAllocationName(name);
        return async (_admin, stores) => {
          await readAllocation(stores.store, name, stores.clock);
          await requestRebalance(stores.store, name);
          return { json: { requested: true, allocation: name }, text: `rebalance of "${name}" requested: its coordinator re-reads the resource set and moves what evenness needs` };
        };
      }),
    );
}

function lastRebalance(a: AllocationStatus, now = Date.now()): string {
  const r = a.lastRebalance;
  if (!r) return 'none yet';
  return `#${r.generation} ${r.reason} ${formatAge(now - r.at)} ago, ${r.moved} moved${r.settled ? '' : ' (in progress)'}`;
}

/** Every allocation as a table. */
export function allocationsText(all: readonly AllocationStatus[]): string {
  if (all.length === 0) return 'no allocations';
  return renderTable(
    ['ALLOCATION', 'NODES', 'RESOURCES', 'UNOWNED', 'SKEW', 'LAST REBALANCE'],
    all.map((a) => [a.name, a.owners.filter((o) => o.participating).length, a.resources, a.unowned, a.skew, lastRebalance(a)]),
  );
}

/** One allocation: its summary, then who owns what. */
export function allocationText(a: AllocationStatus): string {
  const shown = (ids: readonly string[]) => (ids.length <= 6 ? ids.join(', ') : `${ids.slice(0, 6).join(', ')}, … (+${ids.length - 6})`);
  const state = (o: AllocationStatus['owners'][number]) => (o.participating ? 'owns' : o.reserved ? 'reserved' : 'leaving');
  return [
    `allocation "${a.name}": ${a.resources} resources, ${a.unowned} unowned, skew ${a.skew}; last rebalance: ${lastRebalance(a)}${a.lastRebalance?.detail ? ` (${a.lastRebalance.detail})` : ''}`,
    a.owners.length
      ? renderTable(['ACQUIRER', 'GROUP', 'STATE', 'COUNT', 'RESOURCES'], a.owners.map((o) => [o.acquirer, o.group, state(o), o.resources.length, shown(o.resources)]))
      : 'no node takes part',
  ].join('\n');
}

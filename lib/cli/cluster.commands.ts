import type { Command } from 'commander';
import { DEFAULT_ELECTION } from '../elections/election';
import { readElection, resignLeader, validateElectionName } from '../elections/election-admin';
import { clusterOverview } from '../elections/election-status';
import type { Execute } from './cli-command';
import { describeLayout, layoutJson } from './cli-layout';
import { leaderText, movesText, resignText, statusText } from './cli-cluster-format';

/**
 * Adds the cluster commands: `status` (live instances and every election), `leader [election]` and
 * `resign [election]`. Elections are read from the cluster, so they are exact; resign revokes the leader's lease
 * by its epoch, so it works whichever node runs the election's work.
 */
export function addClusterCommands(program: Command, execute: Execute): void {
  program.command('status').description('show where the live app instances keep each capability, the instances (presence) and every election with its leader, epoch and lease left').action(() =>
    execute(() => async (admin, stores) => {
      const [semaphores, participants, moves] = await Promise.all([admin.permits(), stores.presences(), stores.moves()]);
      const overview = clusterOverview({ participants: participants ?? [], viewAgeMs: participants ? 0 : undefined, semaphores }, stores.clock.now());
      const layout = stores.layout;
      const layoutText = layout ? `Stores, as ${layout.nodes === 1 ? 'the live node says' : `the ${layout.nodes} live nodes say`}:\n${describeLayout(layout).map((line) => `  ${line}`).join('\n')}\n\n` : '';
      return {
        json: { ...overview, ...(layout && { stores: layoutJson(layout) }), ...(moves.length > 0 && { moves }) },
        text: `${movesText(moves)}${layoutText}${statusText(overview)}`,
        warnings: participants ? [] : ['presence could not be read: the participants are not known'],
      };
    }),
  );

  program
    .command('leader [election]')
    .description(`show who leads an election (default '${DEFAULT_ELECTION}'): instance, group, epoch, since, lease left, definition`)
    .action((election: string = DEFAULT_ELECTION) =>
      execute(() => {
        validateElectionName(election);
        return async (admin, stores) => {
          const status = await readElection(admin, election, stores.clock);
          return { json: status, text: leaderText(status) };
        };
      }),
    );

  program
    .command('resign [election]')
    .description(
      `make the leader of an election (default '${DEFAULT_ELECTION}') step down: its lease is revoked, it is told and lets go, ` +
        'and another node takes over with a higher epoch',
    )
    .action((election: string = DEFAULT_ELECTION) =>
      execute(() => {
        validateElectionName(election);
        return async (admin, stores) => {
          const result = await resignLeader(admin, election, stores.clock);
          return { json: result, text: resignText(result) };
        };
      }),
    );
}

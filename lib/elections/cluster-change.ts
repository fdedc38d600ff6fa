import type { Leader } from './election';
import type { Presence } from '../presence/presence';

/**
 * What `ClusterService.changes()` reports, told apart by `type`:
 * - `leader-elected`: this node became the leader of `election`, with the leadership's `epoch` (fencing token);
 * - `leader-lost`: this node stopped being the leader of `election` (its lease's signal has fired): the lost `epoch`
 *   and the `reason` (stepped down, resigned, paused or moved by an operator, or not renewed in time);
 * - `leader-changed`: the leader of `election` changed in this node's view (another node, or none): the new `leader`
 *   and the `previous` one, `undefined` while nobody leads;
 * - `participant-joined` / `participant-left`: an app instance announced itself, or withdrew (or its presence
 *   expired): the `participant` as it announced itself.
 */
export type ClusterChange =
  | {
      /** This node became the leader of `election`. */
      readonly type: 'leader-elected';
      /** The election's name. */
      readonly election: string;
      /** The new leadership's epoch (fencing token). */
      readonly epoch: number;
    }
  | {
      /** This node stopped being the leader of `election` (its lease's signal has fired). */
      readonly type: 'leader-lost';
      /** The election's name. */
      readonly election: string;
      /** The lost leadership's epoch (fencing token). */
      readonly epoch: number;
      /** Why: stepped down, resigned, paused or moved by an operator, or not renewed in time. */
      readonly reason: string;
    }
  | {
      /** The leader of `election` changed in this node's view (another node, or none). */
      readonly type: 'leader-changed';
      /** The election's name. */
      readonly election: string;
      /** The new leader, or `undefined` while nobody leads (stepped down, paused). */
      readonly leader: Leader | undefined;
      /** The leader before, or `undefined` if nobody led. */
      readonly previous: Leader | undefined;
    }
  | {
      /** Whether an app instance joined (announced itself) or left (withdrew, or its presence expired). */
      readonly type: 'participant-joined' | 'participant-left';
      /** The instance, as it announced itself. */
      readonly participant: Presence;
    };

import type { Leader } from './election';
import type { Presence } from '../presence/presence';

/** This node became the leader of `election`. */
export interface LeaderElectedChange {
  readonly type: 'leader-elected';
  readonly election: string;
  /** The new leadership's epoch (fencing token). */
  readonly epoch: number;
}

/** This node stopped being the leader of `election` (its lease's signal has fired). */
export interface LeaderLostChange {
  readonly type: 'leader-lost';
  readonly election: string;
  readonly epoch: number;
  /** Why: stepped down, resigned, paused or moved by an operator, or not renewed in time. */
  readonly reason: string;
}

/** The leader of `election` changed in this node's view (another node, or none). */
export interface LeaderChangedChange {
  readonly type: 'leader-changed';
  readonly election: string;
  /** The new leader, or `undefined` while nobody leads (stepped down, paused). */
  readonly leader: Leader | undefined;
  readonly previous: Leader | undefined;
}

/** An app instance joined (announced itself) or left (withdrew, or its presence expired). */
export interface ParticipantChange {
  readonly type: 'participant-joined' | 'participant-left';
  readonly participant: Presence;
}

/** What `ClusterService.changes()` reports. */
export type ClusterChange = LeaderElectedChange | LeaderLostChange | LeaderChangedChange | ParticipantChange;

import type { Leader } from './election';
import type { Presence } from '../presence/presence';

/** This node became the leader of `election`. */
export interface LeaderElectedChange {
  /** The kind of change. */
  readonly type: 'leader-elected';
  /** The election's name. */
  readonly election: string;
  /** The new leadership's epoch (fencing token). */
  readonly epoch: number;
}

/** This node stopped being the leader of `election` (its lease's signal has fired). */
export interface LeaderLostChange {
  /** The kind of change. */
  readonly type: 'leader-lost';
  /** The election's name. */
  readonly election: string;
  /** The lost leadership's epoch (fencing token). */
  readonly epoch: number;
  /** Why: stepped down, resigned, paused or moved by an operator, or not renewed in time. */
  readonly reason: string;
}

/** The leader of `election` changed in this node's view (another node, or none). */
export interface LeaderChangedChange {
  /** The kind of change. */
  readonly type: 'leader-changed';
  /** The election's name. */
  readonly election: string;
  /** The new leader, or `undefined` while nobody leads (stepped down, paused). */
  readonly leader: Leader | undefined;
  /** The leader before, or `undefined` if nobody led. */
  readonly previous: Leader | undefined;
}

/** An app instance joined (announced itself) or left (withdrew, or its presence expired). */
export interface ParticipantChange {
  /** Whether it joined or left. */
  readonly type: 'participant-joined' | 'participant-left';
  /** The instance, as it announced itself. */
  readonly participant: Presence;

}

/** What `ClusterService.changes()` reports. */
export type ClusterChange = LeaderElectedChange | LeaderLostChange | LeaderChangedChange | ParticipantChange;

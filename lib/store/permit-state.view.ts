import type { VersionedPermitState } from './permit-store';
import { decodePermitState } from './permit-state.codec';

/**
 * The newest permit state this node has seen per semaphore: from its own reads and writes and from the cluster's
 * entry events. It lets a node decide without a round trip when the answer cannot be wrong for lack of news: a
 * deny (always safe), or running on a permit it holds that is far from expiry. Anything that writes still goes
 * through compare-and-set, so a stale view costs a retry, never a second holder.
 *
 * Revisions only grow while a cluster keeps its data, so an older event arriving late never overwrites a newer
 * state. After a disconnect the view is cleared: events may have been missed, or the cluster may have lost its
 * data and started its revisions again.
 */
export class PermitStateView {
  private readonly states = new Map<string, VersionedPermitState & { revision: number }>();

  /** The newest state seen for `name`, if any. */
  peek(name: string): VersionedPermitState | undefined {
    return this.states.get(name);
  }

  /** Records a state read or written (`raw`), or learnt from an event; `null` means the entry is gone. */
  observe(name: string, raw: string | null): void {
    if (raw === null) {
      this.states.delete(name);
      return;
    }
    let state;
    try {
      state = decodePermitState(name, raw);
    } catch {
      this.states.delete(name); // unreadable: decide from the store, which reports it
      return;
    }
    const known = this.states.get(name);
    if (known && known.revision > state.revision) return;
    this.states.set(name, { raw, state, revision: state.revision });
  }

  /** Forgets everything (after a disconnect, or when the cluster may have lost its data). */
  clear(): void {
    this.states.clear();
  }
}

import type { Client, InitialMembershipListener } from 'hazelcast-client';
import { LifecycleState } from './hazelcast-client.load';

/** How the wait for an owned client's first connection ended. */
export type FirstOutcome = 'connected' | 'gave up' | 'timed out' | 'abandoned';

/**
 * The wait for an owned client's first connection: connected with the member list known (what a synchronous
 * start waits for), given up by the client itself (its own `clusterConnectTimeoutMillis`), past the bound, or
 * abandoned by a close(). The first of these wins.
 */
export class FirstConnection {
  private settle!: (outcome: FirstOutcome) => void;
  private readonly outcome = new Promise<FirstOutcome>((resolve) => (this.settle = resolve));
  private connected = false;
  private client?: Client;
  private membersListener?: string;

  onLifecycle(state: LifecycleState): void {
    if (state === LifecycleState.CONNECTED) {
      this.connected = true;
      this.awaitMembers();
    } else if (state === LifecycleState.SHUTTING_DOWN || state === LifecycleState.SHUTDOWN) {
      this.settle('gave up');
    }
  }

  abandon(): void {
    this.settle('abandoned');
  }

  /** Waits for the first outcome, at most `timeoutMs` (none: no limit). */
  async wait(client: Client, timeoutMs: number | undefined): Promise<FirstOutcome> {
    this.client = client;
    this.awaitMembers();
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => this.settle('timed out'), Math.max(0, timeoutMs));
    try {
      return await this.outcome;
    } finally {
      clearTimeout(timer);
      if (this.membersListener) client.getCluster().removeMembershipListener(this.membersListener);
    }
  }

  private awaitMembers(): void {
    if (!this.connected || !this.client || this.membersListener) return;
    // An initial-membership listener hears the member list at once if it is known, else when it arrives.
    const listener: InitialMembershipListener = {
      init: () => this.settle('connected'),
      memberAdded: () => undefined,
      memberRemoved: () => undefined,
    };
    this.membersListener = this.client.getCluster().addMembershipListener(listener);
  }
}


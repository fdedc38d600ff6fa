/**
 * The shape of every capability's runtime in the Nest layer (`permits/permits.runtime.ts`,
 * `presence/presence.runtime.ts`, `elections/elections.runtime.ts`, `allocation/allocation.runtime.ts`,
 * `tasks/tasks.runtime.ts`). The lifecycle starts them in its order once the store is connected, and drains and
 * stops them in the reverse order; it knows nothing else about them.
 */
export interface CapabilityRuntime {
  /** Joins the cluster and starts this capability's work on this node. */
  start(): Promise<void>;
  /** Takes no new work and lets running work finish, for up to `timeoutMs` (shutdown's first step). */
  drain(timeoutMs: number): Promise<void>;
  /**
   * Lets go of what is still held. Idempotent; also called without a drain (a context closed without shutdown
   * hooks, or a start that failed half-way).
   */
  stop(): Promise<void>;
}

import type { PermitClaim, PermitDecisions } from './permit-decisions';
import type { SemaphoreAdmin } from './semaphore-admin';
import type { SemaphoreDefinition } from './semaphore-definition';
import { invalidOption } from '../core/errors/input.errors';

/** An election or an allocation, and the semaphore of its own it stands on (`election:<name>`, `allocation:<name>`). */
export interface DedicatedSemaphore {
  readonly kind: 'election' | 'allocation';
  readonly name: string;
  readonly semaphore: string;
}

/** Where a dedicated semaphore's definition may come from, in this order. */
export interface DefinitionSources {
  /** The module options' (published at start-up with the other definitions). */
  readonly declared: SemaphoreDefinition | undefined;
  /** The node's view of the cluster's. */
  readonly viewed: SemaphoreDefinition | null | undefined;
  /** The cluster's, read when the view has none. */
  readonly admin: Pick<SemaphoreAdmin, 'get' | 'define'>;
  /** Whether a missing one is defined with the defaults (else `unknown()` is thrown). */
  readonly autoDefine: boolean;
  readonly defaults: () => SemaphoreDefinition;
  readonly unknown: () => Error;
  /** Told when this node defined it, with a line for the log. */
  readonly onDefined?: (message: string) => void;
}

/** The definition an election or allocation stands under: declared, viewed, stored, or defined now with the defaults. */
export async function ensureDefined({ kind, name, semaphore }: DedicatedSemaphore, sources: DefinitionSources): Promise<SemaphoreDefinition> {
  const existing = sources.declared ?? sources.viewed ?? (await sources.admin.get(semaphore).catch(() => undefined));
  if (existing) return existing;
  if (!sources.autoDefine) throw sources.unknown();
  const definition = sources.defaults();
  if (await sources.admin.define(definition)) sources.onDefined?.(`Defined ${kind} "${name}" (${semaphore}, lease ${definition.durationMs} ms, any group)`);
  return definition;
}

/**
 * Takes the dedicated semaphore's permit for its one user in this process (so no other use of it here can release
 * it); throws naming the election or allocation when other work here uses it.
 */
export function claimDedicated(local: Pick<PermitDecisions, 'claim'>, { kind, name, semaphore }: DedicatedSemaphore): PermitClaim {
  const claim = local.claim(semaphore, `${kind} "${name}"`);
  if (!claim) throw invalidOption(`${kind} "${name}"`, `its semaphore "${semaphore}" is in use by other work in this process`, semaphore);
  return claim;
}

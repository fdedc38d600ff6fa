import type { AllocationAnnex, AllocationPlan, RebalanceReason } from './allocation';

const REASONS: ReadonlySet<string> = new Set<RebalanceReason>(['initial', 'joined', 'left', 'resources-changed', 'requested']);

/** The annex as read: with whether a plan was there but could not be read, and the fields this version does not know. */
export interface ReadAnnex extends AllocationAnnex {
  /** A plan is stored but malformed (or written by a newer version): nodes hold what they have until a new one. */
  readonly unreadablePlan?: true;
  /** Fields this version does not know, kept when it writes the annex back. */
  readonly unknown?: Readonly<Record<string, unknown>>;
}

/**
 * The allocation data in a semaphore entry's annex. A malformed plan reads as none, marked unreadable: the plan
 * only says where resources should go (the permits say who owns what, and safety rests on them alone), so nodes
 * keep what they hold and the coordinator writes a new one.
 */
export function readAnnex(annex: Readonly<Record<string, unknown>> | undefined): ReadAnnex {
  const requests = Number.isSafeInteger(annex?.requests) ? (annex!.requests as number) : 0;
  const plan = readPlan(annex?.plan);
  const { requests: _r, plan: _p, ...unknown } = annex ?? {};
  return {
    requests,
    ...(plan && { plan }),
    ...(!plan && annex?.plan !== undefined && { unreadablePlan: true as const }),
    ...(Object.keys(unknown).length > 0 && { unknown }),
  };
}

/** The annex to write: fields in a fixed order, after any this version does not know. */
export function writeAnnex(annex: ReadAnnex): Record<string, unknown> {
  return {
    ...annex.unknown,
    requests: annex.requests,
    ...(annex.plan && {
      plan: {
        generation: annex.plan.generation,
        at: annex.plan.at,
        by: annex.plan.by,
        reason: annex.plan.reason,
        detail: annex.plan.detail,
        resources: annex.plan.resources,
        targets: annex.plan.targets,
        moved: annex.plan.moved,
        answered: annex.plan.answered,
      },
    }),
  };
}

function readPlan(raw: unknown): AllocationPlan | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const p = raw as Record<string, unknown>;
  const ints = [p.generation, p.at, p.moved, p.answered].every((v) => Number.isSafeInteger(v));
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
  const targets = p.targets;
  if (!ints || typeof p.by !== 'string' || typeof p.detail !== 'string' || !REASONS.has(p.reason as string) || !strings(p.resources)) return undefined;
  if (targets === null || typeof targets !== 'object' || Array.isArray(targets) || !Object.values(targets).every(strings)) return undefined;
  return {
    generation: p.generation as number,
    at: p.at as number,
    by: p.by,
    reason: p.reason as RebalanceReason,
    detail: p.detail,
    resources: p.resources,
    targets: targets as Record<string, string[]>,
    moved: p.moved as number,
    answered: p.answered as number,
  };
}

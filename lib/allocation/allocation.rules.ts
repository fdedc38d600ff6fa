/*
 * The allocation's rules, pure: everything they need is passed in. Who owns a resource is what the permits of the
 * allocation's semaphore say (each lists its resources); the plan in the entry's annex only says where resources
 * should go. Safety rests on the permits alone: a resource is given to a permit only in a write that finds no
 * other live permit listing it, judged with the skew bound like every permit decision.
 *
 * They live in three files, re-exported here: who takes part and owns what (allocation-slots.rules.ts), the plan
 * (allocation-plan.rules.ts, manual slices too), and a node's holdings, following the plan and claiming (allocation-holdings.rules.ts).
 */

export { coordinatorOf, ownersOf, participantsOf, slotsOf, type AllocationSlot } from './allocation-slots.rules';
export { decidePlan, evenTargets, inFlight, manualSlice, type PlanDecision, type PlanInput } from './allocation-plan.rules';
export { amendHoldings, reconcile, type HoldingsChange, type Reconciliation } from './allocation-holdings.rules';

/** One capability's state, which can be put on a backend of its own (see the module's `backends` option). */
export type CapabilityState = 'permits' | 'presence' | 'schedules' | 'history' | 'tasks';

/** Every {@link CapabilityState}, in the order they are named to people. */
export const CAPABILITY_STATES: readonly CapabilityState[] = ['permits', 'presence', 'schedules', 'history', 'tasks'];

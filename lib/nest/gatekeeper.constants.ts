/** Injection token of the resolved, validated module options. */
export const GATEKEEPER_OPTIONS = Symbol('gatekeeper:options');
/** Injection token of the {@link PermitStore} the module uses. */
export const GATEKEEPER_STORE = Symbol('gatekeeper:store');
/** Injection token of the process's shared Hazelcast connection (`undefined` without a Hazelcast store). */
export const GATEKEEPER_CONNECTION = Symbol('gatekeeper:connection');
/** Injection token of the module's backends, one per capability's state (`ModuleBackends`). */
export const GATEKEEPER_BACKENDS = Symbol('gatekeeper:backends');
/** Injection token of the presence store (`undefined` with membership off). */
export const GATEKEEPER_PRESENCE_STORE = Symbol('gatekeeper:presence-store');
/** Injection token of the task store (see the module option `tasks`). */
export const GATEKEEPER_TASK_STORE = Symbol('gatekeeper:task-store');
export const GATEKEEPER_HISTORY_STORE = Symbol('gatekeeper:history-store');
/** Where `@LeaderOnly` runs are recorded (the run history's recorder). */
export const GATEKEEPER_LEADER_RUNS = Symbol('gatekeeper:leader-runs');
export const GATEKEEPER_RUN_REQUEST_STORE = Symbol('gatekeeper:run-request-store');
/** Metadata key under which `@ClusterSingleton` records its options on the wrapped method. */
export const CLUSTER_SINGLETON_METADATA = 'gatekeeper:cluster_singleton';
/** Property the decorator injects the runner into, on the decorated class's instances. */
export const CLUSTER_SINGLETON_RUNNER_PROPERTY = Symbol('gatekeeper:runner');
/** Logger context. */
export const GATEKEEPER_LOGGER_CONTEXT = 'Gatekeeper';
/** Metadata key under which `@LeaderOnly` records its election on the wrapped method. */
export const LEADER_ONLY_METADATA = 'gatekeeper:leader_only';
/** Property the `@LeaderOnly` decorator injects the elections into, on the decorated class's instances. */
export const LEADER_ONLY_ELECTIONS_PROPERTY = Symbol('gatekeeper:elections');
/** Metadata key under which `@TaskHandler`, `@GroupFinishedHandler`, `@InvalidTaskHandler` and `@OncePerTrigger` record what they register. */
export const TASK_HANDLER_METADATA = 'gatekeeper:task_handler';
export const SCHEDULE_HANDLER_METADATA = 'gatekeeper:schedule_handler';
export const GATEKEEPER_SCHEDULE_STORE = Symbol('gatekeeper:schedule-store');
/** Property the `@OncePerTrigger` decorator injects the task runtime into, on the decorated class's instances. */
export const ONCE_PER_TRIGGER_TASKS_PROPERTY = Symbol('gatekeeper:tasks');

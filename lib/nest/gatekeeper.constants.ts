/** Injection token of the resolved, validated module options. */
export const GATEKEEPER_OPTIONS = Symbol('gatekeeper:options');
/** Injection token of the {@link PermitStore} the module uses. */
export const GATEKEEPER_STORE = Symbol('gatekeeper:store');
/** Metadata key under which `@ClusterSingleton` records its options on the wrapped method. */
export const CLUSTER_SINGLETON_METADATA = 'gatekeeper:cluster_singleton';
/** Property the decorator injects the runner into, on the decorated class's instances. */
export const CLUSTER_SINGLETON_RUNNER_PROPERTY = Symbol('gatekeeper:runner');
/** Logger context. */
export const GATEKEEPER_LOGGER_CONTEXT = 'Gatekeeper';

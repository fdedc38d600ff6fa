import { Inject, type Type } from '@nestjs/common';
import { invalidDecorator } from './errors/decorator.errors';

/** Where a wrapper keeps the method it wraps (the job's own body, called without the wrapper's permit or lease). */
const ORIGINAL_METHOD = Symbol('gatekeeper:original-method');

/** The method a library decorator wrapped (`method` itself when it is not a wrapper). */
export function originalMethod(method: object): (...args: unknown[]) => unknown {
  return ((method as Record<symbol, unknown>)[ORIGINAL_METHOD] ?? method) as (...args: unknown[]) => unknown;
}

/** How one of the library's method decorators wraps the method it is applied to. */
export interface MethodWrap<Service> {
  /** The decorator and the method, for errors: `@LeaderOnly on Reports.send`. */
  readonly where: string;
  /** Metadata key the wrapper carries (with {@link metadata}); finding it on the method already means "applied twice". */
  readonly metadataKey: string | symbol;
  readonly metadata: unknown;
  /** What to say when the method already carries `metadataKey` (default: applied twice). */
  readonly twice?: string;
  /** The module's provider the wrapper calls, property-injected into the class under `property`. */
  readonly service: Type<Service>;
  readonly property: symbol;
  /** Runs one call of the decorated method through the service. */
  call(service: Service, original: (...args: unknown[]) => unknown, self: object, args: unknown[]): Promise<unknown>;
}

/**
 * Replaces a decorated method by an async wrapper that calls it through one of the module's providers, the one
 * way the library's method decorators (`@ClusterSingleton`, `@LeaderOnly`, `@OncePerTrigger`) do it: refuses what
 * is not a method and a second application, carries over the metadata other decorators put on the method (so it
 * works above or below `@Cron`), keeps the method's name, and property-injects the provider into the class.
 * Returns the wrapper.
 */
export function wrapDecoratedMethod<Service>(target: object, descriptor: PropertyDescriptor, wrap: MethodWrap<Service>): (...args: unknown[]) => Promise<unknown> {
  const original = descriptor.value as (...args: unknown[]) => unknown;
  if (typeof original !== 'function') throw invalidDecorator(wrap.where, 'not a method');
  if (Reflect.hasMetadata(wrap.metadataKey, original)) throw invalidDecorator(wrap.where, wrap.twice ?? 'applied twice');
  const { property, where } = wrap;
  const wrapper = async function (this: Record<symbol, Service | undefined>, ...args: unknown[]) {
    const service = this[property];
    if (!service) throw invalidDecorator(where, 'no GatekeeperModule in scope (import GatekeeperModule.forRoot(), global by default)');
    return wrap.call(service, original, this, args);
  };
  // Decorators applied before this one (below it) put their metadata on the original function.
  for (const key of Reflect.getMetadataKeys(original)) Reflect.defineMetadata(key, Reflect.getMetadata(key, original), wrapper);
  Reflect.defineMetadata(wrap.metadataKey, wrap.metadata, wrapper);
  Object.defineProperty(wrapper, 'name', { value: original.name });
  Object.defineProperty(wrapper, ORIGINAL_METHOD, { value: original });
  descriptor.value = wrapper;
  if (!Reflect.hasOwnMetadata(property, target)) {
    Reflect.defineMetadata(property, true, target);
    Inject(wrap.service)(target, property);
  }
  return wrapper;
}

/** `ClassName.method`, as errors and log lines name a decorated method. */
export function methodName(target: object, key: string | symbol): string {
  return `${target.constructor.name}.${String(key)}`;
}

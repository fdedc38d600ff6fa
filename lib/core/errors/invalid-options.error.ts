import { InvalidDefinitionError } from './invalid-definition.error';

/**
 * A module option is invalid (`GatekeeperModule.forRoot()` / `forRootAsync()`): `field` is its path, e.g.
 * `identity.group`, `admin.token`, `definitions[2].duration` or `hazelcast.clientConfig.nearCaches`. A subclass of
 * {@link InvalidDefinitionError}, so code that catches either keeps working; its `semaphore` is the semaphore the
 * option defines (`definitions[2]`'s name, an election's or an allocation's semaphore), else `undefined`.
 */
export class InvalidOptionsError extends InvalidDefinitionError {
  constructor(field: string, reason: string, semaphore?: string) {
    super(semaphore, field, reason);
    this.message = `GatekeeperModule options: invalid ${field}: ${reason}`;
    this.printAsOneLine();
  }
}

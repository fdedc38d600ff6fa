import { InvalidDefinitionError } from './invalid-definition.error';

/**
 * A module option is invalid (`GatekeeperModule.forRoot()` / `forRootAsync()`): `field` names it, e.g.
 * `identity.group` or `hazelcast.clientConfig`. A subclass of {@link InvalidDefinitionError}, whose `semaphore` is
 * `'<module options>'`, so code that catches either keeps working.
 */
export class InvalidOptionsError extends InvalidDefinitionError {
  constructor(field: string, reason: string) {
    super('<module options>', field, reason);
    this.message = `GatekeeperModule options: invalid ${field}: ${reason}`;
  }
}

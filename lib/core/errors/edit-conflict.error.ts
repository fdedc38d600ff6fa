import { GatekeeperError } from './gatekeeper.error';

/** An operator edit kept conflicting with concurrent writes and was not applied. Nothing was changed; retry it. */
export class EditConflictError extends GatekeeperError {
  constructor(
    /** The semaphore being edited. */
    readonly semaphore: string,
    /** How many times the edit was tried. */
    readonly attempts: number,
  ) {
    super(`Semaphore "${semaphore}": edit not applied, it conflicted with concurrent writes ${attempts} times; nothing was changed`);
  }
}

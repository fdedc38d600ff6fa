import { GatekeeperError } from './gatekeeper.error';

/**
 * An operator's edit of a semaphore or a schedule was not applied: it kept conflicting with concurrent writes until
 * its attempts or deadline ran out, or (a schedule's, with `expectedRevision`) the record was not at the revision the
 * caller based the edit on. Nothing was changed; read it again and retry. The admin API answers it 409 with
 * `{ [kind]: id, reason }`: `REVISION_CONFLICT` (with both revisions) or `WRITE_CONFLICT`.
 */
export class EditConflictError extends GatekeeperError {
  constructor(
    /** What was edited. */
    readonly kind: 'semaphore' | 'schedule',
    /** Its name or id. */
    readonly id: string,
    /** How many compare-and-set attempts were made. */
    readonly attempts: number,
    /** The revision the caller expected, when it gave one. */
    readonly expectedRevision?: number,
    /** The revision found instead (0: none live), when the conflict is with `expectedRevision`. */
    readonly actualRevision?: number,
  ) {
    const what = `${kind === 'semaphore' ? 'Semaphore' : 'Schedule'} "${id}": edit not applied`;
    super(
      expectedRevision !== undefined && actualRevision !== undefined
        ? `${what}, it expected revision ${expectedRevision} but the ${kind} is at ${actualRevision === 0 ? 'none (no live schedule)' : `revision ${actualRevision}`}; nothing was changed`
        : `${what}, it conflicted with concurrent writes ${attempts} times; nothing was changed`,
    );
  }
}

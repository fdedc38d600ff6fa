import { EditConflictError } from '../../core/errors/edit-conflict.error';

/**
 * A schedule edit was not applied: the schedule's revision was not the one the caller based the edit on
 * (`expectedRevision`), or the edit kept losing to concurrent writes until its attempts or deadline ran out. Nothing
 * was changed; read the schedule again and retry. An {@link EditConflictError}, so the admin API answers it with 409.
 */
export class ScheduleEditConflictError extends EditConflictError {
  constructor(
    /** The schedule's id. */
    readonly schedule: string,
    /** How many compare-and-set attempts were made. */
    attempts: number,
    /** The revision the caller expected, when it gave one. */
    readonly expectedRevision?: number,
    /** The revision found instead (0: no live schedule), when the conflict is with `expectedRevision`. */
    readonly actualRevision?: number,
  ) {
    super(schedule, attempts);
    this.message =
      expectedRevision !== undefined && actualRevision !== undefined
        ? `Schedule "${schedule}": edit not applied, it expected revision ${expectedRevision} but the schedule is at ${actualRevision === 0 ? 'none (no live schedule)' : `revision ${actualRevision}`}; nothing was changed`
        : `Schedule "${schedule}": edit not applied, it conflicted with concurrent writes ${attempts} times; nothing was changed`;
  }
}

import { CorruptStateError } from '../core/errors/corrupt-state.error';
import { parseJsonObject } from '../core/json-object';
import type { ScheduleDefinition } from './schedule-definition';
import { healthInput, validateScheduleDefinition } from './schedule-definition.validator';
import type { ScheduleRecord } from './schedule-record';
import { checkInInput, type CheckIn } from './check-in';

/*
 * One canonical JSON encoding of a schedule record. Hazelcast's compare-and-set compares serialized bytes, so the
 * library writes strings it produced itself, keys in a fixed order (the data's own keys sorted when validated),
 * and passes back the exact string it read. `v` is the format version.
 */
const FORMAT = 1;

/** Encodes a record canonically. */
export function encodeScheduleRecord(record: ScheduleRecord): string {
  return JSON.stringify({
    v: FORMAT,
    id: record.id,
    revision: record.revision,
    updatedAt: record.updatedAt,
    updatedBy: record.updatedBy,
    writeId: record.writeId,
    definition: record.definition === null ? null : definitionFields(record.definition),
  });
}

/** Whether two definitions say the same (equal canonical encodings): an upsert of an equal one writes nothing. */
export function sameDefinition(a: ScheduleDefinition, b: ScheduleDefinition): boolean {
  return JSON.stringify(definitionFields(a)) === JSON.stringify(definitionFields(b));
}

/** Decodes a record, throwing {@link CorruptStateError} naming `key` for anything this library did not write. */
export function decodeScheduleRecord(key: string, raw: unknown): ScheduleRecord {
  const value = parseJsonObject(key, raw);
  if (value.v !== FORMAT) throw new CorruptStateError(key, `unknown schedule format version ${JSON.stringify(value.v)}`);
  const { id, revision, updatedAt, updatedBy, writeId, definition } = value;
  if (id !== key) throw new CorruptStateError(key, `holds the schedule ${JSON.stringify(id)}`);
  if (!isInt(revision) || revision < 1 || !isInt(updatedAt) || typeof updatedBy !== 'string' || typeof writeId !== 'string') {
    throw new CorruptStateError(key, 'missing or mistyped revision, updatedAt, updatedBy or writeId');
  }
  return { id, revision, updatedAt, updatedBy, writeId, definition: definition === null ? null : decodeDefinition(key, definition) };
}

/** The definition's fields in their fixed order; `undefined` ones (a policy's unused option) are left out. */
function definitionFields(d: ScheduleDefinition): Record<string, unknown> {
  return {
    id: d.id,
    cron: d.cron,
    timeZone: d.timeZone,
    handler: d.handler,
    data: d.data,
    paused: d.paused,
    semaphore: d.semaphore,
    permits: d.permits,
    durationMs: d.durationMs,
    groupPattern: d.groupPattern,
    acquirerPattern: d.acquirerPattern,
    missedRuns: d.missedRuns,
    catchUpWindowMs: d.catchUpWindowMs,
    overlap: d.overlap,
    replaceWaitMs: d.replaceWaitMs,
    health: d.health && { graceMs: d.health.graceMs, failureThreshold: d.health.failureThreshold, recoveryThreshold: d.health.recoveryThreshold },
    checkIn: d.checkIn && { start: d.checkIn.start, success: d.checkIn.success, failure: d.checkIn.failure, timeoutMs: d.checkIn.timeoutMs },
  };
}

/**
 * Re-validates a stored definition (its shape: the cron grammar is the runner's to judge, so a value another
 * version's cron package accepted still reads, and the runner reports it).
 */
function decodeDefinition(key: string, raw: unknown): ScheduleDefinition {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new CorruptStateError(key, 'definition is not an object');
  const d = raw as Record<string, unknown>;
  if (d.id !== key) throw new CorruptStateError(key, `holds the definition of ${JSON.stringify(d.id)}`);
  try {
    return validateScheduleDefinition({
      id: d.id as string,
      cron: d.cron as string,
      timeZone: d.timeZone as string,
      handler: d.handler as string,
      data: d.data as ScheduleDefinition['data'],
      paused: d.paused as boolean,
      semaphore: d.semaphore as string,
      permits: d.permits as number,
      duration: d.durationMs as number,
      groupPattern: d.groupPattern as string,
      acquirerPattern: d.acquirerPattern as string,
      missedRuns: d.missedRuns as ScheduleDefinition['missedRuns'],
      ...(d.catchUpWindowMs !== undefined && { catchUpWindow: d.catchUpWindowMs as number }),
      overlap: d.overlap as ScheduleDefinition['overlap'],
      ...(d.replaceWaitMs !== undefined && { replaceWait: d.replaceWaitMs as number }),
      ...(d.health !== undefined && { health: healthInput(d.health as NonNullable<ScheduleDefinition['health']>) }),
      ...(d.checkIn !== undefined && { checkIn: checkInInput(d.checkIn as CheckIn) }),
    });
  } catch (error) {
    throw new CorruptStateError(key, (error as Error).message);
  }
}

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

import { CorruptStateError } from '../core/errors/corrupt-state.error';
import { parseJsonObject } from '../core/json-object';
import { validateDefinition } from './definition.validator';
import type { Permit } from './permit';
import type { SemaphoreEntry, SemaphoreMove } from './semaphore-entry';
import type { GroupMigrationMemory, SemaphoreDefinition } from './semaphore-definition';

/*
 * One canonical JSON encoding for everything the stores keep. Hazelcast's compare-and-set compares serialized
 * bytes, so the library writes strings it produced itself, with a fixed key order, and passes back the exact
 * string it read. `v` is the format version: 2 is one entry per semaphore (definition and permits together); 3
 * adds permits' resources and the entry's annex (allocations). An entry without either is still written as 2, so
 * older versions keep reading plain semaphores; one with them is written as 3, which older versions refuse to
 * read (and so can never rewrite it without the resources, which would hand a resource to two owners).
 * `vacatedAt` (missed runs) needs no new version: an absent field is left out, so entries without it encode exactly
 * as before; an older version reads past it and drops it when it writes, which only loses the memory of removals,
 * and a fresh grant then reports a vacancy no earlier than the permits that write kept, or none at all.
 */
const FORMAT = 2;
const FORMAT_WITH_RESOURCES = 3;

/** Encodes an entry canonically. */
export function encodeEntry(entry: SemaphoreEntry): string {
  const extended = entry.annex !== undefined || entry.permits.some((p) => p.resources !== undefined);
  return JSON.stringify({
    v: extended ? FORMAT_WITH_RESOURCES : FORMAT,
    revision: entry.revision,
    writeId: entry.writeId,
    definition: entry.definition ? definitionFields(entry.definition) : null,
    lastToken: entry.lastToken,
    graceUntil: entry.graceUntil,
    rebuilt: entry.rebuilt ? { lostSince: entry.rebuilt.lostSince, fromRevision: entry.rebuilt.fromRevision } : undefined,
    vacatedAt: entry.vacatedAt,
    permits: entry.permits.map((p) => ({
      semaphore: p.semaphore,
      acquirer: p.acquirer,
      group: p.group,
      instance: p.instance,
      fencingToken: p.fencingToken,
      grantedAt: p.grantedAt,
      refreshedAt: p.refreshedAt,
      expiresAt: p.expiresAt,
      revokedAt: p.revokedAt,
      released: p.released || undefined,
      resources: p.resources ? sortedResources(p.resources) : undefined,
    })),
    annex: entry.annex,
    move: entry.move && (entry.move.state === 'arriving' ? { state: 'arriving', from: entry.move.from, at: entry.move.at } : { state: 'left', to: entry.move.to, at: entry.move.at }),
  });
}

function sortedResources(resources: Readonly<Record<string, number>>): Record<string, number> {
  const sorted: Record<string, number> = {};
  for (const id of Object.keys(resources).sort()) sorted[id] = resources[id];
  return sorted;
}

/**
 * The revision of a value as this library encodes it, read from its first bytes without parsing the rest, or
 * `undefined` when the value does not start as {@link encodeEntry} writes (then only a full decode can tell). A
 * value that starts so may still be unreadable further on: the view decodes it once somebody needs it.
 */
export function encodedRevision(raw: string): number | undefined {
  const start = raw.startsWith(`{"v":${FORMAT},"revision":`) || raw.startsWith(`{"v":${FORMAT_WITH_RESOURCES},"revision":`) ? 18 : -1;
  if (start < 0) return undefined;
  const end = raw.indexOf(',', start);
  if (end <= start || end - start > 16) return undefined;
  const digits = raw.slice(start, end);
  if (!/^(0|[1-9]\d*)$/.test(digits)) return undefined;
  const revision = Number(digits);
  return Number.isSafeInteger(revision) ? revision : undefined;
}

/**
 * The writeId of a writer's `n`-th write: its mark (a UUID of its own), a dot, then `n` in base 36. Unique as long as
 * marks are; a watch with `exceptMark` tells a writer's values by it (`writtenByMark`).
 */
export function writeIdOf(writer: string, n: number): string {
  return `${writer}.${n.toString(36)}`;
}

/** Decodes an entry, throwing {@link CorruptStateError} naming `key` for anything this library did not write. */
export function decodeEntry(key: string, raw: unknown): SemaphoreEntry {
  const value = parseJsonObject(key, raw);
  if (value.v !== FORMAT && value.v !== FORMAT_WITH_RESOURCES) throw new CorruptStateError(key, `unknown format version ${JSON.stringify(value.v)}`);
  const { revision, lastToken, writeId, permits, definition, graceUntil, rebuilt, vacatedAt, annex, move } = value;
  if (!isInt(revision) || !isInt(lastToken) || typeof writeId !== 'string' || !Array.isArray(permits)) {
    throw new CorruptStateError(key, 'missing or mistyped revision, lastToken, writeId or permits');
  }
  if (graceUntil !== undefined && !isInt(graceUntil)) throw new CorruptStateError(key, 'graceUntil is not a whole number');
  if (vacatedAt !== undefined && !isInt(vacatedAt)) throw new CorruptStateError(key, 'vacatedAt is not a whole number');
  const from = rebuilt as { lostSince?: unknown; fromRevision?: unknown } | undefined;
  if (from !== undefined && (from === null || typeof from !== 'object' || !isInt(from.lostSince) || !isInt(from.fromRevision))) {
    throw new CorruptStateError(key, 'rebuilt is malformed');
  }
  if (annex !== undefined && !isPlainObject(annex)) throw new CorruptStateError(key, 'annex is not an object');
  if (move !== undefined && !isMove(move)) throw new CorruptStateError(key, 'move is malformed');
  const entry: SemaphoreEntry = {
    revision,
    writeId,
    definition: definition === null ? null : decodeDefinition(key, definition),
    lastToken,
    permits: permits.map((p, i) => decodePermit(key, i, p)),
  };
  return {
    ...entry,
    ...(graceUntil !== undefined && { graceUntil }),
    ...(from !== undefined && { rebuilt: { lostSince: from.lostSince as number, fromRevision: from.fromRevision as number } }),
    ...(vacatedAt !== undefined && { vacatedAt }),
    ...(annex !== undefined && { annex: annex as Record<string, unknown> }),
    ...(move !== undefined && { move: move as SemaphoreMove }),
  };
}

/** Decodes every readable entry, sorted by name; unreadable ones go to `onCorrupt` and are skipped. */
export function decodeEntries(
  entries: Iterable<[string, string]>,
  onCorrupt: (key: string, reason: string) => void,
): Array<{ name: string; entry: SemaphoreEntry }> {
  const decoded: Array<{ name: string; entry: SemaphoreEntry }> = [];
  for (const [name, raw] of entries) {
    try {
      decoded.push({ name, entry: decodeEntry(name, raw) });
    } catch (error) {
      onCorrupt(name, (error as Error).message);
    }
  }
  return decoded.sort((a, b) => a.name.localeCompare(b.name));
}

function definitionFields(definition: SemaphoreDefinition): Record<string, unknown> {
  return {
    name: definition.name,
    permits: definition.permits,
    durationMs: definition.durationMs,
    groupPattern: definition.groupPattern,
    acquirerPattern: definition.acquirerPattern,
    pausedFrom: definition.pausedFrom,
    migratedFrom: definition.migratedFrom
      ? {
          groupPattern: definition.migratedFrom.groupPattern,
          fromGroup: definition.migratedFrom.fromGroup,
          toGroup: definition.migratedFrom.toGroup,
          at: definition.migratedFrom.at,
          editedAt: definition.migratedFrom.editedAt,
        }
      : undefined,
  };
}

/** Decodes and re-validates a stored definition. */
function decodeDefinition(key: string, raw: unknown): SemaphoreDefinition {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new CorruptStateError(key, 'definition is not an object');
  const value = raw as Record<string, unknown>;
  if (value.name !== key) throw new CorruptStateError(key, `holds the definition of ${JSON.stringify(value.name)}`);
  try {
    const definition = validateDefinition({
      name: value.name as string,
      permits: value.permits as number,
      duration: value.durationMs as number,
      groupPattern: value.groupPattern as string,
      acquirerPattern: value.acquirerPattern as string,
    });
    const migratedFrom = decodeMigrationMemory(value.migratedFrom);
    return {
      ...definition,
      ...(isInt(value.pausedFrom) && value.pausedFrom > 0 && { pausedFrom: value.pausedFrom }),
      ...(migratedFrom && { migratedFrom }),
    };
  } catch (error) {
    throw new CorruptStateError(key, (error as Error).message);
  }
}

/**
 * The memory of a group migration, or `undefined` when there is none. Like `pausedFrom`, a malformed one is
 * dropped rather than making the whole entry unreadable: it only serves undo, never a permit decision.
 */
function decodeMigrationMemory(raw: unknown): GroupMigrationMemory | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const m = raw as Record<string, unknown>;
  const text = (v: unknown): v is string => typeof v === 'string' && v !== '';
  if (!text(m.groupPattern) || !text(m.fromGroup) || !text(m.toGroup) || !isInt(m.at)) return undefined;
  if (m.editedAt !== undefined && !isInt(m.editedAt)) return undefined;
  return {
    groupPattern: m.groupPattern,
    fromGroup: m.fromGroup,
    toGroup: m.toGroup,
    at: m.at,
    ...(m.editedAt !== undefined && { editedAt: m.editedAt as number }),
  };
}


function decodePermit(key: string, index: number, raw: unknown): Permit {
  const p = (raw ?? {}) as Record<string, unknown>;
  const ok =
    typeof p.semaphore === 'string' &&
    typeof p.acquirer === 'string' &&
    typeof p.group === 'string' &&
    typeof p.instance === 'string' &&
    [p.fencingToken, p.grantedAt, p.refreshedAt, p.expiresAt].every(isInt) &&
    (p.revokedAt === undefined || isInt(p.revokedAt)) &&
    (p.released === undefined || p.released === true) &&
    (p.resources === undefined || (isPlainObject(p.resources) && Object.values(p.resources).every(isInt)));
  if (!ok) throw new CorruptStateError(key, `permit #${index} is malformed`);
  const permit: Permit = {
    semaphore: p.semaphore as string,
    acquirer: p.acquirer as string,
    group: p.group as string,
    instance: p.instance as string,
    fencingToken: p.fencingToken as number,
    grantedAt: p.grantedAt as number,
    refreshedAt: p.refreshedAt as number,
    expiresAt: p.expiresAt as number,
  };
  return {
    ...permit,
    ...(p.revokedAt !== undefined ? { revokedAt: p.revokedAt as number } : {}),
    ...(p.released ? { released: true } : {}),
    ...(p.resources !== undefined ? { resources: p.resources as Record<string, number> } : {}),
  };
}

/** A move as `encodeEntry` writes it: its state, the other store (its kind) and when. */
function isMove(value: unknown): boolean {
  if (!isPlainObject(value) || !isInt(value.at)) return false;
  return (value.state === 'arriving' && typeof value.from === 'string') || (value.state === 'left' && typeof value.to === 'string');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

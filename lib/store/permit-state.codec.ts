import { CorruptStateError } from '../errors/corrupt-state.error';
import { validateDefinition } from '../gatekeeper/definition.validator';
import type { Permit, PermitState } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';

/*
 * One canonical JSON encoding for everything the stores keep. Hazelcast's compare-and-set compares serialized
 * bytes, so the library writes strings it produced itself, with a fixed key order, and passes back the exact
 * string it read. `v` is the format version, so a later format can tell old values apart.
 */
const FORMAT = 1;

/** Encodes a permit state canonically. */
export function encodePermitState(state: PermitState): string {
  return JSON.stringify({
    v: FORMAT,
    revision: state.revision,
    lastToken: state.lastToken,
    writeId: state.writeId,
    permits: state.permits.map((p) => ({
      semaphore: p.semaphore,
      acquirer: p.acquirer,
      group: p.group,
      fencingToken: p.fencingToken,
      grantedAt: p.grantedAt,
      refreshedAt: p.refreshedAt,
      expiresAt: p.expiresAt,
    })),
  });
}

/** Decodes a permit state, throwing {@link CorruptStateError} naming `key` for anything it did not write. */
export function decodePermitState(key: string, raw: unknown): PermitState {
  const value = parse(key, raw);
  if (value.v !== FORMAT) throw new CorruptStateError(key, `unknown format version ${JSON.stringify(value.v)}`);
  const { revision, lastToken, writeId, permits } = value;
  if (!isInt(revision) || !isInt(lastToken) || typeof writeId !== 'string' || !Array.isArray(permits)) {
    throw new CorruptStateError(key, 'missing or mistyped revision, lastToken, writeId or permits');
  }
  return { revision, lastToken, writeId, permits: permits.map((p, i) => decodePermit(key, i, p)) };
}

/** Decodes every readable entry, sorted by name; unreadable ones go to `onCorrupt` and are skipped. */
export function decodePermitStates(
  entries: Iterable<[string, string]>,
  onCorrupt: (key: string, reason: string) => void,
): Array<{ name: string; state: PermitState }> {
  const states: Array<{ name: string; state: PermitState }> = [];
  for (const [name, raw] of entries) {
    try {
      states.push({ name, state: decodePermitState(name, raw) });
    } catch (error) {
      onCorrupt(name, (error as Error).message);
    }
  }
  return states.sort((a, b) => a.name.localeCompare(b.name));
}

/** Encodes a definition canonically. */
export function encodeDefinition(definition: SemaphoreDefinition): string {
  return JSON.stringify({
    v: FORMAT,
    name: definition.name,
    permits: definition.permits,
    durationMs: definition.durationMs,
    groupPattern: definition.groupPattern,
    acquirerPattern: definition.acquirerPattern,
    pausedFrom: definition.pausedFrom,
  });
}

/** Decodes and re-validates a stored definition, throwing {@link CorruptStateError} naming `key` if it is not one. */
export function decodeDefinition(key: string, raw: unknown): SemaphoreDefinition {
  const value = parse(key, raw);
  if (value.v !== FORMAT) throw new CorruptStateError(key, `unknown format version ${JSON.stringify(value.v)}`);
  if (value.name !== key) throw new CorruptStateError(key, `holds the definition of ${JSON.stringify(value.name)}`);
  try {
    const definition = validateDefinition({
      name: value.name as string,
      permits: value.permits as number,
      duration: value.durationMs as number,
      groupPattern: value.groupPattern as string,
      acquirerPattern: value.acquirerPattern as string,
    });
    return isInt(value.pausedFrom) && value.pausedFrom > 0 ? { ...definition, pausedFrom: value.pausedFrom } : definition;
  } catch (error) {
    throw new CorruptStateError(key, (error as Error).message);
  }
}

function parse(key: string, raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'string') throw new CorruptStateError(key, `expected a JSON string, found ${typeof raw}`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new CorruptStateError(key, `not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CorruptStateError(key, 'not a JSON object');
  return value as Record<string, unknown>;
}

function decodePermit(key: string, index: number, raw: unknown): Permit {
  const p = (raw ?? {}) as Record<string, unknown>;
  const ok =
    typeof p.semaphore === 'string' &&
    typeof p.acquirer === 'string' &&
    typeof p.group === 'string' &&
    [p.fencingToken, p.grantedAt, p.refreshedAt, p.expiresAt].every(isInt);
  if (!ok) throw new CorruptStateError(key, `permit #${index} is malformed`);
  return p as unknown as Permit;
}

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/**
 * A top-level field of a record's JSON object value (`undefined` when the value is not a JSON object): what
 * `RecordMap.findBy` compares where a backend filters records itself instead of querying an index.
 */
export function recordField(value: string, field: string): unknown {
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[field] : undefined;
  } catch {
    return undefined;
  }
}

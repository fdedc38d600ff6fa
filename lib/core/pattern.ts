const compiled = new Map<string, RegExp>();

/** Whether `value` matches the whole of `pattern` (the definition's regexes are full-match, as in Java's `matches`). */
export function fullMatch(pattern: string, value: string): boolean {
  let regex = compiled.get(pattern);
  if (!regex) {
    regex = new RegExp(`^(?:${pattern})$`, 'u');
    // Patterns come from a handful of definitions; the cap only guards against unbounded churn from live edits.
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, regex);
  }
  return regex.test(value);
}

/** Returns why `pattern` is not a valid regex, or `undefined` when it is. */
export function patternError(pattern: string): string | undefined {
  // Every decoded entry re-validates its definition: a pattern already compiled is known to be valid.
  if (compiled.has(pattern)) return undefined;
  try {
    new RegExp(`^(?:${pattern})$`, 'u');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

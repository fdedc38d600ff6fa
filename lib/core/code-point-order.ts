/** Code-point order, the same on every node whatever its locale (sorting that every node must agree on). */
export function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

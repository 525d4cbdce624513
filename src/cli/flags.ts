/** A command-line flag that must be a whole number of at least 1: the fallback when absent, an error naming the flag when bad. */
export function positiveIntFlag(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

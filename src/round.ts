/**
 * Figures the spec gives no precision for are served rounded, so float noise
 * from summing in storage (`0.5399419499999999`) never reaches a client:
 * amounts of US dollars to 1e-9 (a billionth of a dollar, far below any
 * model's price per token) and averages and percentiles to 1e-6.
 *
 * @module
 */

/** Dollars rounded to 1e-9. */
export function roundUsd(value: number): number {
  return roundTo(value, 1e9);
}

/** An average or percentile rounded to 1e-6. */
export function roundStat(value: number): number {
  return roundTo(value, 1e6);
}

function roundTo(value: number, scale: number): number {
  if (!Number.isFinite(value)) return value;
  const scaled = Math.round(value * scale);
  return Number.isSafeInteger(scaled) ? scaled / scale : value;
}

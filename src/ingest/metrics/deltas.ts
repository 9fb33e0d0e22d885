/**
 * Per-series accounting: what each stored point adds to its interval. The
 * store keeps points as they came (one row per series, start time and time;
 * a retry stores nothing twice), and the deltas are a pure function of that
 * set, computed where they are read: so they need no process memory, do not
 * depend on arrival order or on which node took an export, and a replica
 * that copies rows append-only computes the same figures.
 *
 * The rule, which the replica's window query (`LAG(value) OVER (PARTITION BY
 * series, start ORDER BY time)`) mirrors:
 * - a delta point adds its value;
 * - a cumulative point adds its value minus the previous point's of the same
 *   series and start time; the first point of a start time adds its whole
 *   value (the count since that start: a new start time is a restart);
 * - a monotonic point below the previous one of its start time is a restart
 *   the sender did not mark: it adds its whole value (never a negative count).
 *
 * Partitioning by start time, not only by series, also keeps two processes
 * that report one series at once (the same session resumed twice) from
 * reading each other's totals as resets.
 *
 * @module
 */

/** The fields of a stored point the accounting reads. */
export interface SeriesPoint {
  /** The series within its organization and actor. */
  seriesId: string;
  temporality: "delta" | "cumulative";
  monotonic: boolean;
  startTimeNs: bigint | null;
  timeNs: bigint;
  value: number;
}

/**
 * What each point adds to the interval ending at its time, in the order of
 * `points` (any order). Points are a set keyed by series, start time and
 * time, as the store keeps them: a repeat of one adds 0.
 */
export function intervalDeltas(points: readonly SeriesPoint[]): number[] {
  const deltas = new Array<number>(points.length).fill(0);
  const partitions = new Map<string, number[]>();
  for (let i = 0; i < points.length; i++) {
    const point = points[i]!;
    const key = `${point.seriesId}\u0000${point.startTimeNs ?? ""}`;
    const members = partitions.get(key);
    if (members === undefined) partitions.set(key, [i]);
    else members.push(i);
  }
  for (const members of partitions.values()) {
    // Stable: of points with the same time, the first given is the stored one.
    members.sort((a, b) => compareTimes(points[a]!.timeNs, points[b]!.timeNs) || a - b);
    let previous: SeriesPoint | undefined;
    for (const i of members) {
      const point = points[i]!;
      if (previous !== undefined && previous.timeNs === point.timeNs) continue;
      deltas[i] = deltaOf(point, previous);
      previous = point;
    }
  }
  return deltas;
}

/** What `point` adds given the previous point of its series and start time. */
export function deltaOf(point: SeriesPoint, previous: SeriesPoint | undefined): number {
  if (point.temporality === "delta" || previous === undefined) return point.value;
  if (point.monotonic && point.value < previous.value) return point.value;
  return point.value - previous.value;
}

function compareTimes(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A session's dimension: a resource attribute named by `--dimension`
 * (docs/api.md §4.22), as the ingest collects it and the store keeps it.
 *
 * @module
 */

/**
 * One dimension of one session as an export sent it. `value` is null when it
 * was over the value limit (`DIMENSION_LIMITS` in src/config.ts): nothing is kept, the drop is
 * counted.
 */
export interface SessionDimension {
  sessionId: string;
  key: string;
  value: string | null;
}

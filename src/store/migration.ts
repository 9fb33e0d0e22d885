/**
 * Numbered schema migrations as both engines keep them: each store's list
 * (`sqlite/migrations.ts`, `postgres/migrate.ts`) is applied in order, each
 * step once, and a read-only store must already be at the latest.
 *
 * @module
 */

/** A numbered schema step, applied once, in order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** A migration that rebuilds a table's indexes: the table, and the rate it goes at (measured). */
  rebuilds?: { table: string; rowsPerSecond: number };
}

/** The migrations a store at version `current` has yet to apply, in order. */
export function pendingMigrations(
  migrations: readonly Migration[],
  current: number,
): Migration[] {
  return migrations.filter((m) => m.version > current).sort((a, b) => a.version - b.version);
}

/** The version the whole list brings a store to. */
export function latestVersion(migrations: readonly Migration[]): number {
  return Math.max(...migrations.map((m) => m.version));
}

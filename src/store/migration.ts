/**
 * Numbered schema migrations as both engines keep them: each store's series
 * of SQL files (`sqlite/migrations.ts`, `postgres/migrate.ts`) is applied in
 * order, each step once, and a read-only store must already be at the latest.
 * A series is found by file name in its `sql/` folder, so a new migration is
 * a new file and nothing else.
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

/** What a migration needs besides its file, by version: the code its SQL cannot say. */
export type MigrationExtras = Readonly<
  Record<number, Pick<Migration, "rebuilds"> | { withdrawn: string }>
>;

/** One series of a folder: file names `<prefix>NNNN_<name>.sql` (prefix `""` or ending in `_`). */
export interface MigrationSeries {
  prefix: string;
  extras?: MigrationExtras;
}

/** A file of a migration series, before its SQL is read. */
export interface MigrationFile {
  version: number;
  name: string;
  file: string;
}

const MIGRATION_FILE = /^(?<prefix>(?:[a-z]+_)?)(?<version>\d{4})_(?<name>[a-z][a-z0-9_]*)\.sql$/;

/**
 * The migration files among a folder's file names, one list per series, in
 * version order. A name holding a digit or starting with a series' prefix is
 * a migration: it must read `<prefix>NNNN_<name>.sql` for one of `series`,
 * and each series must number its files 1, 2, 3… with no number twice and
 * none missing (a version withdrawn before any release is declared in its
 * extras, and has no file). Anything else throws, naming the file: a
 * misnamed migration would otherwise never run.
 */
export function migrationFiles(
  names: readonly string[],
  series: readonly MigrationSeries[],
): MigrationFile[][] {
  const found = series.map((): MigrationFile[] => []);
  for (const file of [...names].sort()) {
    const candidate = /\d/.test(file) ||
      series.some(({ prefix }) => prefix !== "" && file.startsWith(prefix));
    if (!file.endsWith(".sql") || !candidate) continue;
    const match = MIGRATION_FILE.exec(file)?.groups;
    const index = series.findIndex(({ prefix }) => prefix === match?.prefix);
    if (!match || index < 0) {
      const expected = series.map(({ prefix }) => `${prefix}NNNN_<name>.sql`).join(" or ");
      throw new Error(`Migration file not named ${expected}: "${file}"`);
    }
    found[index]!.push({
      version: Number(match.version),
      name: match.name!.replaceAll("_", " "),
      file,
    });
  }
  return found.map((files, i) => {
    const { prefix, extras = {} } = series[i]!;
    files.sort((a, b) => a.version - b.version);
    const latest = Math.max(0, ...files.map((f) => f.version), ...Object.keys(extras).map(Number));
    for (let version = 1; version <= latest; version++) {
      const at = files.filter((f) => f.version === version);
      const withdrawn = "withdrawn" in (extras[version] ?? {});
      const expected = `"${prefix}${String(version).padStart(4, "0")}_<name>.sql"`;
      if (at.length > 1) {
        throw new Error(`Two migration files of one version: ${at.map((f) => `"${f.file}"`)}`);
      }
      if (at.length === 1 && withdrawn) {
        throw new Error(`Migration declared withdrawn has a file: "${at[0]!.file}"`);
      }
      if (at.length === 0 && !withdrawn) {
        throw new Error(`Missing migration file (or its withdrawal): ${expected}`);
      }
    }
    return files;
  });
}

/**
 * The migration series of a `sql/` folder (see {@link migrationFiles}), each
 * file's SQL read from `folder`. The folder is read where the module stands:
 * `deno compile` embeds it by `--include` (`scripts/compile.ts`), as the
 * release ships `sql/` beside the program.
 */
export function readMigrations(
  folder: URL,
  series: readonly MigrationSeries[],
): Migration[][] {
  const names = [...Deno.readDirSync(folder)].filter((e) => e.isFile).map((e) => e.name);
  return migrationFiles(names, series).map((files, i) =>
    files.map(({ version, name, file }) => {
      const extra = series[i]!.extras?.[version];
      return {
        version,
        name,
        sql: Deno.readTextFileSync(new URL(file, folder)),
        ...(extra && "rebuilds" in extra ? { rebuilds: extra.rebuilds } : {}),
      };
    })
  );
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

/**
 * The numbered migrations of the PostgreSQL store (`sql/postgres/`), tracked
 * in `schema_migrations`. Several nodes may start at once: the pending steps
 * run in one transaction under an advisory lock, so exactly one node applies
 * them and the others find them done.
 *
 * @module
 */
import migrationsSql from "../../../sql/postgres/migrations.sql" with { type: "text" };
import { UserInputError } from "../../errors.ts";
import { namedSql, parseNamedSql } from "../named_sql.ts";
import { latestVersion, type Migration, pendingMigrations, readMigrations } from "../migration.ts";
import { numberPlaceholders, type Sql, type TransactionSql } from "./client.ts";

/** Migrations of the PostgreSQL store (`sql/postgres/000N_*.sql`, found by name), in order. */
export const postgresMigrations: readonly Migration[] = readMigrations(
  new URL("../../../sql/postgres/", import.meta.url),
  [{ prefix: "" }],
)[0]!;

/** Key of the advisory lock migrations hold: any fixed number, the same on every node. */
const MIGRATION_LOCK = 0x61_74_6d_67; // "atmg"

const statements = parseNamedSql(migrationsSql);
const LOCK = numberPlaceholders(namedSql(statements, "lock"));
const CREATE_TABLE = namedSql(statements, "create_table");
const CURRENT_VERSION = namedSql(statements, "current_version");
const RECORD = numberPlaceholders(namedSql(statements, "record"));

const UNDEFINED_TABLE = "42P01";

async function currentVersion(sql: Sql | TransactionSql): Promise<number> {
  const [row] = await sql.unsafe<{ version: number }[]>(CURRENT_VERSION);
  return row?.version ?? 0;
}

/**
 * Creates `schema_migrations` when missing and applies the pending migrations
 * in one transaction; resolves with the database's version.
 */
export async function migratePostgres(sql: Sql): Promise<number> {
  return await sql.begin(async (tx) => {
    await tx.unsafe(LOCK, [MIGRATION_LOCK]);
    await tx.unsafe(CREATE_TABLE);
    const current = await currentVersion(tx);
    const pending = pendingMigrations(postgresMigrations, current);
    for (const migration of pending) {
      await tx.unsafe(migration.sql);
      await tx.unsafe(RECORD, [migration.version, migration.name, Date.now()]);
    }
    return pending.at(-1)?.version ?? current;
  });
}

/** Throws unless every migration was applied (for read-only nodes, which do not migrate). */
export async function requirePostgresMigrated(sql: Sql): Promise<void> {
  const current = await currentVersion(sql).catch((error) => {
    if ((error as { code?: string }).code === UNDEFINED_TABLE) return 0;
    throw error;
  });
  const latest = latestVersion(postgresMigrations);
  if (current < latest) {
    throw new UserInputError(
      `PostgreSQL database is not at the current schema: version ${current}, needs ${latest}; start once without --readonly`,
    );
  }
}

/**
 * Applies the migrations through `sql` (read-only: requires them applied);
 * when that fails, ends `pools` (those the caller has just opened) and rethrows.
 */
export async function migrateOrEnd(
  sql: Sql,
  pools: readonly Sql[],
  options: { readOnly?: boolean } = {},
): Promise<void> {
  try {
    if (options.readOnly) await requirePostgresMigrated(sql);
    else await migratePostgres(sql);
  } catch (error) {
    await Promise.all(pools.map((pool) => pool.end()));
    throw error;
  }
}

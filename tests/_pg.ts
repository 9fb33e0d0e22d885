/**
 * PostgreSQL for tests: `AGENT_TELEMETRY_TEST_DATABASE_URL` names a server
 * (e.g. the one `scripts/pg_local.sh start` runs); each test gets a database
 * of its own, created empty and dropped afterwards. Without the variable the
 * PostgreSQL tests are skipped (`ignore: !pgTestUrl()`).
 *
 * @module
 */
import { connectPostgres } from "../src/store/postgres/client.ts";

/** The PostgreSQL server of the test run, or null when none is configured. */
export function pgTestUrl(): string | null {
  return Deno.env.get("AGENT_TELEMETRY_TEST_DATABASE_URL") || null;
}

/** A fresh, empty database on the test server. */
export interface TestDatabase extends AsyncDisposable {
  url: string;
  drop(): Promise<void>;
}

/** Options of {@link createTestDatabase}. */
export interface TestDatabaseOptions {
  /** An ICU locale (e.g. `"en-US"`) for the database's default collation instead of the server's. */
  icuLocale?: string;
}

/** Creates an empty database on the test server; throws when none is configured. */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = pgTestUrl();
  if (!serverUrl) throw new Error("AGENT_TELEMETRY_TEST_DATABASE_URL is not set");
  const name = `at_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = connectPostgres(serverUrl, { max: 1 });
  try {
    const locale = options.icuLocale === undefined
      ? ""
      : ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale}'`;
    await admin.unsafe(`CREATE DATABASE ${name}${locale}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    const sql = connectPostgres(serverUrl, { max: 1 });
    try {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await sql.end();
    }
  };
  return { url: url.toString(), drop, [Symbol.asyncDispose]: drop };
}

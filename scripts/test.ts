/**
 * `deno task test`: the whole suite (`deno test --allow-all --parallel`, extra
 * arguments passed through), with the PostgreSQL variants of the engine tests
 * whenever PostgreSQL can be had:
 *
 * - `AGENT_TELEMETRY_TEST_DATABASE_URL` set (CI, a developer's server): used as is;
 * - else, when PostgreSQL's `initdb` and `pg_ctl` are installed (on `PATH` or in
 *   `/usr/lib/postgresql/<version>/bin`): a throwaway cluster is started with
 *   `scripts/pg_local.sh` on a free loopback port and stopped afterwards;
 * - else one line says the PostgreSQL variants are skipped and how to run them.
 *
 * @module
 */

const URL_VARIABLE = "AGENT_TELEMETRY_TEST_DATABASE_URL";
const PG_LOCAL = new URL("./pg_local.sh", import.meta.url).pathname;

/** Whether `name` is an executable file. */
function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** A directory holding both `initdb` and `pg_ctl`, or null when PostgreSQL is not installed. */
export function postgresBinaries(
  path = Deno.env.get("PATH") ?? "",
  versionsDir = "/usr/lib/postgresql",
): string | null {
  const dirs = path.split(":").filter((dir) => dir !== "");
  try {
    // The newest version first, as scripts/pg_local.sh picks it.
    const versions = [...Deno.readDirSync(versionsDir)].map((entry) => entry.name)
      .sort((a, b) => Number(b) - Number(a) || b.localeCompare(a));
    dirs.push(...versions.map((version) => `${versionsDir}/${version}/bin`));
  } catch {
    // No Debian-style installation.
  }
  return dirs.find((dir) => isExecutable(`${dir}/initdb`) && isExecutable(`${dir}/pg_ctl`)) ??
    null;
}

/** A TCP port nothing listens on right now, on 127.0.0.1. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/** Runs `scripts/pg_local.sh`; its stdout (the URL on start), or null with its stderr shown. */
async function pgLocal(args: string[]): Promise<string | null> {
  const output = await new Deno.Command("bash", {
    args: [PG_LOCAL, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.success) return new TextDecoder().decode(output.stdout).trim();
  Deno.stderr.writeSync(output.stderr);
  return null;
}

/** One line for the person running the suite (stderr: stdout stays deno test's). */
function say(line: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(`${line}\n`));
}

/** Starts `deno test` with `env` added. */
function denoTest(env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", ...Deno.args],
    env,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
}

/** Runs `deno test` with `env` added; its exit code. */
async function denoTestCode(env: Record<string, string>): Promise<number> {
  return (await denoTest(env).status).code;
}

async function main(): Promise<number> {
  if (Deno.env.get(URL_VARIABLE)) return await denoTestCode({});
  const binaries = postgresBinaries();
  if (binaries === null) {
    say(
      `PostgreSQL variants skipped: no initdb/pg_ctl found; install PostgreSQL (apt-get install postgresql) or set ${URL_VARIABLE}=postgres://…`,
    );
    return await denoTestCode({});
  }
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-test-pg-" });
  const stop = async () => {
    await pgLocal(["stop", dir]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const url = await pgLocal(["start", dir, String(freePort())]);
  if (url === null) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    say(
      `PostgreSQL variants skipped: could not start PostgreSQL from ${binaries} (above); set ${URL_VARIABLE}=postgres://… to use a running server`,
    );
    return await denoTestCode({});
  }
  say(`PostgreSQL variants on a throwaway server (${binaries}) at ${url}`);
  const tests = denoTest({ [URL_VARIABLE]: url });
  // Interrupted: deno test is ended, then the server is stopped as after a normal run.
  const interrupt = () => {
    try {
      tests.kill("SIGTERM");
    } catch {
      // Already ended.
    }
  };
  Deno.addSignalListener("SIGINT", interrupt);
  Deno.addSignalListener("SIGTERM", interrupt);
  try {
    return (await tests.status).code;
  } finally {
    await stop();
    Deno.removeSignalListener("SIGINT", interrupt);
    Deno.removeSignalListener("SIGTERM", interrupt);
  }
}

if (import.meta.main) Deno.exit(await main());

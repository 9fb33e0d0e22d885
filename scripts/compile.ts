/**
 * Builds the single executable `dist/agent-telemetry` with `deno compile`.
 *
 * - Embeds the SQL (text imports, and the migration folders), the reader
 *   thread module and DuckDB's native addon for this platform only (the other
 *   platforms' and the musl builds are excluded).
 * - `--self-extracting`: DuckDB's `duckdb.node` loads `libduckdb.so` from its
 *   own directory (`RUNPATH $ORIGIN`), and a plain compiled binary extracts
 *   only the `.node` file (denoland/deno#29203, #36626). A self-extracting
 *   binary unpacks its whole file system beside itself on first run, so the
 *   library is found.
 * - `--node-modules-dir=auto`: compile resolves from `node_modules` as it did while deno.json
 *   said `"auto"` (it says `"manual"` so that `deno task` installs nothing before `demo`); the
 *   exclusions below name that layout, which the `install` task run first has filled.
 * - Minimal permissions instead of `-A`: files, network, environment, FFI
 *   (DuckDB's addon) and system info (DuckDB reads the CPU count).
 * - `deno compile` needs the `denort` base binary: `DENORT_BIN` when set (an
 *   air-gapped build machine), else Deno downloads it (a connected machine).
 *   When neither works the script ends with one line naming `DENORT_BIN`, not
 *   Deno's DNS error and backtrace; `deno task release` needs no `denort`.
 * - Every worker module the program starts is embedded (`--include`); a test
 *   compares {@link WORKERS} with the `new Worker(...)` calls in `src/`.
 * - So is every folder the program reads files from ({@link FOLDERS}: the
 *   migrations, found by name in `sql/`); a test compares it with the folder
 *   URLs (`new URL(".../", import.meta.url)`) in `src/`.
 *
 * @module
 */
import { SERVER_V8_FLAGS } from "../src/memory_budget.ts";
import { handleHelp } from "./_script_args.ts";

const OTHER_PLATFORMS = [
  "darwin-arm64",
  "darwin-x64",
  "linux-arm64",
  "linux-arm64-musl",
  "linux-x64",
  "linux-x64-musl",
  "win32-arm64",
  "win32-x64",
];

/** The DuckDB binding package of the machine we build for. */
export function duckdbBinding(os = Deno.build.os, arch = Deno.build.arch): string {
  const cpu = arch === "aarch64" ? "arm64" : "x64";
  const platform = os === "windows" ? "win32" : os;
  return `${platform}-${cpu}`;
}

/** The worker modules of the program, as `deno compile --include` paths. */
export const WORKERS = [
  "src/store/sqlite/checkpoint_worker.ts",
  "src/store/sqlite/read_worker.ts",
  "src/store/sqlite/writer_worker.ts",
];

/** The folders the program reads at run time, as `deno compile --include` paths. */
export const FOLDERS = ["sql/postgres", "sql/sqlite"];

/** The `deno compile` arguments. */
export function compileArgs(output: string): string[] {
  const keep = duckdbBinding();
  const excluded = OTHER_PLATFORMS.filter((p) => p !== keep).flatMap((p) => [
    "--exclude",
    `node_modules/.deno/@duckdb+node-bindings-${p}@1.5.5-r.5`,
  ]);
  return [
    "compile",
    "--self-extracting",
    "--node-modules-dir=auto",
    "--allow-read",
    "--allow-write",
    "--allow-net",
    "--allow-env",
    "--allow-ffi",
    "--allow-sys",
    `--v8-flags=${SERVER_V8_FLAGS.join(",")}`,
    ...[...WORKERS, ...FOLDERS].flatMap((path) => ["--include", path]),
    ...excluded,
    "--output",
    output,
    "main.ts",
  ];
}

/** The one line said when no `denort` base binary can be had. */
export function denortMissingMessage(reason: string): string {
  return `deno compile needs the denort base binary of Deno ${Deno.version.deno} ` +
    `(${Deno.build.target}) and could not download it (${reason}): set DENORT_BIN to its path, ` +
    `or build the offline release with deno task release`;
}

/** The `denort` download URL of this Deno, as `deno compile` fetches it. */
export function denortUrl(): string {
  return `https://dl.deno.land/release/v${Deno.version.deno}/denort-${Deno.build.target}.zip`;
}

/** Why `denort` cannot be had, or `null` when it is cached or its download server answers. */
async function denortUnavailable(): Promise<string | null> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const denoDir = info.success
    ? JSON.parse(new TextDecoder().decode(info.stdout)).denoDir as string
    : null;
  const cached = denoDir &&
    `${denoDir}/dl/release/v${Deno.version.deno}/denort-${Deno.build.target}.zip`;
  if (cached) {
    try {
      await Deno.stat(cached);
      return null;
    } catch {
      // not cached: ask the server below
    }
  }
  try {
    const response = await fetch(denortUrl(), {
      method: "HEAD",
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
    return response.ok ? null : `${new URL(denortUrl()).host} answered ${response.status}`;
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const text = cause instanceof Error ? cause.message : String(cause);
    // The innermost cause, e.g. "Temporary failure in name resolution".
    const innermost = text.split("\n")[0]!.split(": ").at(-1);
    return `${new URL(denortUrl()).host} unreachable: ${innermost}`;
  }
}

if (import.meta.main) {
  handleHelp(`deno task compile [OUTPUT]
Builds the single executable (default dist/agent-telemetry) with deno compile; it needs the denort
base binary: DENORT_BIN names it where it cannot be downloaded (or use deno task release).`);
  const output = Deno.args[0] ?? "dist/agent-telemetry";
  const denort = Deno.env.get("DENORT_BIN");
  const say = (line: string) => {
    // deno-lint-ignore no-console
    console.error(line);
  };
  if (!denort) {
    const reason = await denortUnavailable();
    if (reason) {
      say(denortMissingMessage(reason));
      Deno.exit(1);
    }
  }
  // deno-lint-ignore no-console
  console.log(
    `deno ${compileArgs(output).join(" ")}${denort ? ` (DENORT_BIN=${denort})` : ""}`,
  );
  const result = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(output),
    stdout: "inherit",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(result.stderr);
  if (!result.success && !denort && /Setting up base binary|denort/.test(stderr)) {
    // The download failed after the check above (e.g. the network went away meanwhile).
    const cause = /\d+: (.*error.*)$/m.exec(stderr)?.[1] ?? "download failed";
    say(denortMissingMessage(cause));
    Deno.exit(1);
  }
  await Deno.stderr.write(result.stderr);
  Deno.exit(result.code);
}

/**
 * Builds the single executable `dist/agent-telemetry` with `deno compile`.
 *
 * - Embeds the SQL (text imports), the reader thread module and DuckDB's
 *   native addon for this platform only (the other platforms' and the musl
 *   builds are excluded).
 * - `--self-extracting`: DuckDB's `duckdb.node` loads `libduckdb.so` from its
 *   own directory (`RUNPATH $ORIGIN`), and a plain compiled binary extracts
 *   only the `.node` file (denoland/deno#29203, #36626). A self-extracting
 *   binary unpacks its whole file system beside itself on first run, so the
 *   library is found.
 * - Minimal permissions instead of `-A`: files, network, environment, FFI
 *   (DuckDB's addon) and system info (DuckDB reads the CPU count).
 * - `deno compile` needs the `denort` base binary: `DENORT_BIN` when set (an
 *   air-gapped build machine), else Deno downloads it (a connected machine).
 *
 * @module
 */

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
    "--allow-read",
    "--allow-write",
    "--allow-net",
    "--allow-env",
    "--allow-ffi",
    "--allow-sys",
    "--include",
    "src/store/read_worker.ts",
    ...excluded,
    "--output",
    output,
    "main.ts",
  ];
}

if (import.meta.main) {
  const output = Deno.args[0] ?? "dist/agent-telemetry";
  const denort = Deno.env.get("DENORT_BIN");
  // deno-lint-ignore no-console
  console.log(
    `deno ${compileArgs(output).join(" ")}${denort ? ` (DENORT_BIN=${denort})` : ""}`,
  );
  const status = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(output),
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  Deno.exit(status.code);
}

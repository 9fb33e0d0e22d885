/**
 * Builds the offline release `dist/agent-telemetry-<version>-linux-x64.tar.gz`: everything a host
 * without network needs to run the server, and nothing else.
 *
 * ```
 * agent-telemetry-<version>-linux-x64/
 *   bin/agent-telemetry        launcher (deploy/launcher.sh): the runtime below, fixed flags, no network
 *   runtime/deno               the Deno runtime, from the npm package `deno` (version pinned by .ci/run)
 *   app/                       main.ts and the local modules it reaches, sql/, deno.json, deno.lock
 *   app/node_modules/          the locked npm packages the program imports, for this platform only
 *   systemd/agent-telemetry.service, install.sh, release.json
 * ```
 *
 * - The program is taken from `HEAD` (`git archive`), so a release is a commit, never a half-edited
 *   working tree; `--worktree` takes the files on disk instead.
 * - Its npm packages are found from the module graph of `main.ts` and its workers (`deno info`),
 *   so test-only packages (`@opentelemetry/*`, `@grpc/grpc-js`) are never shipped; `app/deno.lock`
 *   is the project lockfile cut down to them (same integrities) and `deno install --frozen` proves
 *   it is complete. The release config uses `nodeModulesDir: "manual"`: Deno then resolves from
 *   `node_modules` as it is, never consulting the registry or its cache, so packages of another
 *   platform or libc can be left out.
 * - The npm package `deno` ships no binary of its own: its optional dependency for the platform
 *   does (`@deno/linux-x64-glibc`, the executable `deno` at the package root). It is installed by
 *   Deno's npm client against a pinned integrity.
 *
 * Usage: `deno task release [--out DIR] [--worktree]`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "./_script_args.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** The platform a release is built for: the runtime package and `os`/`cpu`/`libc` of packages. */
export const TARGET = { name: "linux-x64", os: "linux", cpu: "x64", libc: "glibc" } as const;

/** The npm package holding the Deno executable for {@link TARGET}. */
export const RUNTIME_PACKAGE = "@deno/linux-x64-glibc";

/**
 * Integrity of {@link RUNTIME_PACKAGE} per Deno version (`npm view <pkg>@<v> dist.integrity`):
 * the runtime is the one binary of a release no lockfile covers, so it is pinned here.
 */
export const RUNTIME_INTEGRITY: Record<string, string> = {
  "2.9.6":
    "sha512-3md4TKLCuzsLDmfOoC5KN7NAZaxSVkMgm64vg6foD00JBADCpYS2/5QqXfzgnP5ZQz3iLP9vBQJtEgc116OAoQ==",
};

/** Paths (from the repository root) a release's program may come from. */
const SOURCE_PATHS = ["main.ts", "src", "sql", "scripts", "deploy", "deno.json", "deno.lock"];

/** A Deno lockfile (version 5), the parts a release reads and writes. */
export interface Lockfile {
  version: string;
  specifiers: Record<string, string>;
  npm: Record<string, LockedPackage>;
  workspace?: { dependencies?: string[] };
  [other: string]: unknown;
}

/** One npm package of a lockfile. */
export interface LockedPackage {
  integrity: string;
  dependencies?: string[];
  optionalDependencies?: string[];
  os?: string[];
  cpu?: string[];
  [other: string]: unknown;
}

/** The name part of a lockfile package key such as `@scope/pkg@1.2.3_peer@4`. */
export function packageName(key: string): string {
  const at = key.indexOf("@", 1);
  return at < 0 ? key : key.slice(0, at);
}

/**
 * The lockfile cut down to the given `npm:` specifiers and every package they reach (optional
 * dependencies included: the lockfile is the resolution, the platform filter comes later).
 */
export function lockSubset(lock: Lockfile, specifiers: string[]): Lockfile {
  const keys = Object.keys(lock.npm);
  const resolve = (dependency: string): string => {
    if (lock.npm[dependency]) return dependency;
    const matches = keys.filter((k) => packageName(k) === dependency);
    if (matches.length !== 1) throw new Error(`Cannot resolve "${dependency}" in deno.lock`);
    return matches[0]!;
  };
  const chosen: Record<string, string> = {};
  const todo: string[] = [];
  for (const specifier of specifiers) {
    const version = lock.specifiers[specifier];
    if (version === undefined) throw new Error(`deno.lock has no entry for ${specifier}`);
    chosen[specifier] = version;
    todo.push(`${packageName(specifier.slice("npm:".length))}@${version}`);
  }
  const npm: Record<string, LockedPackage> = {};
  while (todo.length > 0) {
    const key = resolve(todo.pop()!);
    if (npm[key]) continue;
    const entry = lock.npm[key]!;
    npm[key] = entry;
    todo.push(...(entry.dependencies ?? []), ...(entry.optionalDependencies ?? []));
  }
  const sorted = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => a < b ? -1 : 1));
  return {
    version: lock.version,
    specifiers: sorted(chosen) as Record<string, string>,
    npm: sorted(npm) as Record<string, LockedPackage>,
    workspace: { dependencies: Object.keys(chosen).sort() },
  };
}

/**
 * The import map entries a set of bare specifiers needs: `@bufbuild/protobuf/wire` is served by
 * the `@bufbuild/protobuf` entry. A bare specifier with no entry is an error here, not on a host.
 */
export function importsFor(
  imports: Record<string, string>,
  bare: Iterable<string>,
): Record<string, string> {
  const needed: Record<string, string> = {};
  for (const specifier of bare) {
    const name = Object.keys(imports)
      .filter((k) => specifier === k || specifier.startsWith(`${k}/`))
      .sort((a, b) => b.length - a.length)[0];
    if (name === undefined) throw new Error(`No import map entry for "${specifier}"`);
    needed[name] = imports[name]!;
  }
  return Object.fromEntries(Object.entries(needed).sort(([a], [b]) => a < b ? -1 : 1));
}

/** The Deno version CI pins (`DENO_VERSION=` in `.ci/run`), the one a release ships. */
export function pinnedDenoVersion(ciScript: string): string {
  const match = /^DENO_VERSION=([0-9][\w.+-]*)\s*$/m.exec(ciScript);
  if (!match) throw new Error("No DENO_VERSION= line in .ci/run");
  return match[1]!;
}

/** The service version in `src/version.ts`. */
export function serviceVersion(versionModule: string): string {
  const match = /VERSION\s*=\s*"([^"]+)"/.exec(versionModule);
  if (!match) throw new Error("No VERSION in src/version.ts");
  return match[1]!;
}

/** Worker modules a source starts (`new Worker(new URL("./x.ts", import.meta.url))`). */
export function workerModules(source: string): string[] {
  const found: string[] = [];
  const pattern = /new\s+URL\(\s*"(\.{1,2}\/[^"]+\.ts)"\s*,\s*import\.meta\.url\s*\)/g;
  for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

async function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; stdout?: "piped" | "inherit" } = {},
): Promise<string> {
  const output = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    stdout: options.stdout ?? "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").slice(-8).join("\n");
    throw new Error(`${command} ${args.join(" ")} failed (exit ${output.code}):\n${stderr}`);
  }
  return new TextDecoder().decode(output.stdout);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function copyTree(from: string, to: string): Promise<void> {
  await run("cp", ["-a", from, to]);
}

/** Extracts the release's sources into `dir`: `HEAD` by default, else the working tree. */
async function extractSources(dir: string, worktree: boolean): Promise<string> {
  if (worktree) {
    for (const path of SOURCE_PATHS) await copyTree(`${ROOT}/${path}`, `${dir}/`);
    return "worktree";
  }
  const commit = (await run("git", ["rev-parse", "HEAD"], { cwd: ROOT })).trim();
  const archive = `${dir}.tar`;
  await run("git", ["archive", "--output", archive, commit, ...SOURCE_PATHS], { cwd: ROOT });
  await run("tar", ["-xf", archive, "-C", dir]);
  await Deno.remove(archive);
  return commit;
}

/** What a program reaches: its local files and the bare specifiers they import. */
export interface ModuleGraph {
  /** Paths relative to the tree, sorted. */
  files: string[];
  bareSpecifiers: Set<string>;
}

/**
 * Local files and bare specifiers reached from `main.ts` and every worker it starts, in `tree` (a
 * checkout or a staged copy): its scratch files are written to a temporary directory, never into
 * `tree`.
 */
export async function programGraph(tree: string): Promise<ModuleGraph> {
  const scratch = await Deno.makeTempDir({ prefix: "agent-telemetry-graph-" });
  try {
    return await graphOf(tree, scratch);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
}

async function graphOf(tree: string, scratch: string): Promise<ModuleGraph> {
  const entry = `${scratch}/graph.ts`;
  const roots = new Set(["./main.ts"]);
  // A config of the project's import map without a node_modules folder: `deno info` then reads
  // the global cache and installs nothing into the tree.
  const config = JSON.parse(await Deno.readTextFile(`${tree}/deno.json`));
  const infoConfig = `${scratch}/deno.json`;
  await Deno.writeTextFile(
    infoConfig,
    JSON.stringify({
      imports: config.imports,
      nodeModulesDir: "none",
      lock: { path: `${tree}/deno.lock`, frozen: true },
    }),
  );
  for (;;) {
    await Deno.writeTextFile(
      entry,
      [...roots].map((r) => `import "${new URL(r, `file://${tree}/`).href}";\n`).join(""),
    );
    const info = JSON.parse(
      await run(Deno.execPath(), [
        "info",
        "--json",
        "--config",
        infoConfig,
        entry,
      ], { cwd: tree }),
    ) as {
      modules: {
        specifier: string;
        local?: string;
        dependencies?: { specifier: string }[];
      }[];
    };
    const files: string[] = [];
    const bareSpecifiers = new Set<string>();
    let grew = false;
    for (const module of info.modules) {
      if (!module.specifier.startsWith("file://") || !module.local) continue;
      if (module.local === entry) continue;
      const relative = module.local.slice(tree.length + 1);
      files.push(relative);
      for (const dependency of module.dependencies ?? []) {
        const s = dependency.specifier;
        if (!/^(\.|\/|[a-z]+:)/.test(s)) bareSpecifiers.add(s);
        if (s.startsWith("npm:")) bareSpecifiers.add(s);
      }
      if (relative.endsWith(".ts")) {
        const dir = relative.includes("/") ? relative.slice(0, relative.lastIndexOf("/")) : ".";
        for (const worker of workerModules(await Deno.readTextFile(module.local))) {
          const root = "./" + new URL(worker, `file:///${dir}/`).pathname.slice(1);
          if (!roots.has(root)) {
            roots.add(root);
            grew = true;
          }
        }
      }
    }
    if (!grew) return { files: files.sort(), bareSpecifiers };
  }
}

/** Removes installed packages whose `os`, `cpu` or `libc` exclude {@link TARGET}, and links to them. */
async function dropOtherPlatforms(nodeModules: string): Promise<string[]> {
  const dropped: string[] = [];
  const store = `${nodeModules}/.deno`;
  for await (const entry of Deno.readDir(store)) {
    if (!entry.isDirectory || entry.name === "node_modules") continue;
    const at = entry.name.indexOf("@", 1);
    const name = entry.name.slice(0, at).replace("+", "/");
    const manifest = `${store}/${entry.name}/node_modules/${name}/package.json`;
    if (!(await exists(manifest))) continue;
    const pkg = JSON.parse(await Deno.readTextFile(manifest));
    const allows = (field: unknown, value: string) =>
      !Array.isArray(field) || field.includes(value) ||
      (field.every((v: string) => v.startsWith("!")) && !field.includes(`!${value}`));
    if (
      allows(pkg.os, TARGET.os) && allows(pkg.cpu, TARGET.cpu) && allows(pkg.libc, TARGET.libc)
    ) continue;
    await Deno.remove(`${store}/${entry.name}`, { recursive: true });
    dropped.push(entry.name);
  }
  // Symlinks to what was dropped (e.g. an optional dependency's link beside its dependant).
  const links = (await run("find", [nodeModules, "-xtype", "l"])).split("\n").filter(Boolean);
  for (const link of links) await Deno.remove(link);
  return dropped.sort();
}

/** Installs the Deno runtime of `version` from npm and returns the executable's path. */
async function fetchRuntime(cacheDir: string, version: string): Promise<string> {
  const integrity = RUNTIME_INTEGRITY[version];
  if (!integrity) {
    throw new Error(
      `No pinned integrity for ${RUNTIME_PACKAGE}@${version}: add it to RUNTIME_INTEGRITY ` +
        `in scripts/release.ts (npm view ${RUNTIME_PACKAGE}@${version} dist.integrity)`,
    );
  }
  const dir = `${cacheDir}/runtime-${version}`;
  await Deno.mkdir(dir, { recursive: true });
  const specifier = `npm:${RUNTIME_PACKAGE}@${version}`;
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ nodeModulesDir: "manual" }));
  await Deno.writeTextFile(
    `${dir}/package.json`,
    JSON.stringify({ private: true, dependencies: { [RUNTIME_PACKAGE]: version } }),
  );
  await Deno.writeTextFile(
    `${dir}/deno.lock`,
    JSON.stringify({
      version: "5",
      specifiers: { [specifier]: version },
      npm: {
        [`${RUNTIME_PACKAGE}@${version}`]: { integrity, os: [TARGET.os], cpu: [TARGET.cpu] },
      },
      workspace: { packageJson: { dependencies: [specifier] } },
    }),
  );
  await run(Deno.execPath(), ["install", "--frozen"], { cwd: dir });
  const binary = `${dir}/node_modules/${RUNTIME_PACKAGE}/deno`;
  const reported = (await run(binary, ["--version"])).split("\n")[0] ?? "";
  if (!reported.startsWith(`deno ${version} `)) {
    throw new Error(`${binary} reports "${reported}", expected deno ${version}`);
  }
  return binary;
}

/** What {@link buildRelease} made. */
export interface Release {
  /** The `.tar.gz` archive. */
  archive: string;
  /** Its top-level directory name, `agent-telemetry-<version>-linux-x64`. */
  name: string;
  version: string;
  deno: string;
  /** The commit built, or `"worktree"`. */
  source: string;
  /** The npm packages under `app/node_modules` (`name@version`). */
  packages: string[];
  bytes: number;
}

/** Builds the release archive into `outDir` (default `dist/`). */
export async function buildRelease(
  options: { outDir?: string; worktree?: boolean; log?: (line: string) => void } = {},
): Promise<Release> {
  const outDir = options.outDir ?? `${ROOT}/dist`;
  const log = options.log ?? (() => {});
  if (Deno.build.os !== TARGET.os || Deno.build.arch !== "x86_64") {
    throw new Error(`Releases are built on ${TARGET.name} (this is ${Deno.build.target})`);
  }
  // Staged outside the checkout: no deno.json of the project is an ancestor of the staged app.
  const work = await Deno.makeTempDir({ prefix: "agent-telemetry-release-" });
  const tree = `${work}/source`;
  await Deno.mkdir(tree);
  try {
    const source = await extractSources(tree, options.worktree ?? false);
    const version = serviceVersion(await Deno.readTextFile(`${tree}/src/version.ts`));
    const denoVersion = pinnedDenoVersion(await Deno.readTextFile(`${ROOT}/.ci/run`));
    const name = `agent-telemetry-${version}-${TARGET.name}`;
    log(`building ${name} from ${source}, deno ${denoVersion}`);

    const graph = await programGraph(tree);
    const config = JSON.parse(await Deno.readTextFile(`${tree}/deno.json`));
    const imports = importsFor(config.imports, graph.bareSpecifiers);
    const lock = lockSubset(
      JSON.parse(await Deno.readTextFile(`${tree}/deno.lock`)),
      Object.values(imports),
    );
    log(`program: ${graph.files.length} files; npm imports: ${Object.keys(imports).join(", ")}`);

    const stage = `${tree}/${name}`;
    const app = `${stage}/app`;
    for (const file of [...graph.files, ...(await sqlFiles(tree))]) {
      const target = `${app}/${file}`;
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
      await Deno.copyFile(`${tree}/${file}`, target);
    }
    await Deno.writeTextFile(`${app}/deno.lock`, JSON.stringify(lock, null, 2) + "\n");
    const releaseConfig = (mode: "auto" | "manual") =>
      JSON.stringify({ nodeModulesDir: mode, imports }, null, 2) + "\n";
    await Deno.writeTextFile(`${app}/deno.json`, releaseConfig("auto"));
    // --frozen: the cut-down lockfile must already be exactly what Deno would write.
    await run(Deno.execPath(), ["install", "--frozen"], { cwd: app });
    await Deno.writeTextFile(`${app}/deno.json`, releaseConfig("manual"));
    const dropped = await dropOtherPlatforms(`${app}/node_modules`);
    if (dropped.length > 0) log(`left out for other platforms: ${dropped.join(", ")}`);
    const packages = [];
    for await (const entry of Deno.readDir(`${app}/node_modules/.deno`)) {
      if (entry.isDirectory && entry.name !== "node_modules") {
        packages.push(entry.name.replace("+", "/"));
      }
    }
    packages.sort();

    await Deno.mkdir(`${stage}/runtime`, { recursive: true });
    await Deno.copyFile(await fetchRuntime(work, denoVersion), `${stage}/runtime/deno`);
    await Deno.chmod(`${stage}/runtime/deno`, 0o755);
    await Deno.mkdir(`${stage}/bin`);
    await Deno.copyFile(`${tree}/deploy/launcher.sh`, `${stage}/bin/agent-telemetry`);
    await Deno.chmod(`${stage}/bin/agent-telemetry`, 0o755);
    await Deno.copyFile(`${tree}/deploy/install.sh`, `${stage}/install.sh`);
    await Deno.chmod(`${stage}/install.sh`, 0o755);
    await Deno.mkdir(`${stage}/systemd`);
    await Deno.copyFile(
      `${tree}/deploy/agent-telemetry.service`,
      `${stage}/systemd/agent-telemetry.service`,
    );
    await Deno.writeTextFile(
      `${stage}/release.json`,
      JSON.stringify(
        {
          service: "agent-telemetry",
          version,
          target: TARGET.name,
          deno: denoVersion,
          source,
          packages,
        },
        null,
        2,
      ) + "\n",
    );

    // Nothing in a release is writable but by its owner, whatever the checkout's umask was.
    await run("chmod", ["-R", "go-w", stage]);
    await Deno.mkdir(outDir, { recursive: true });
    const archive = `${outDir}/${name}.tar.gz`;
    const partial = `${archive}.partial`;
    await run("tar", [
      "--create",
      "--gzip",
      "--file",
      partial,
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--sort=name",
      "-C",
      tree,
      name,
    ]);
    await Deno.rename(partial, archive);
    const bytes = (await Deno.stat(archive)).size;
    log(`wrote ${archive} (${(bytes / 1e6).toFixed(1)} MB)`);
    return { archive, name, version, deno: denoVersion, source, packages, bytes };
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

async function sqlFiles(tree: string): Promise<string[]> {
  const out = await run("find", ["sql", "-type", "f", "-name", "*.sql"], { cwd: tree });
  return out.split("\n").filter(Boolean);
}

if (import.meta.main) {
  const usage = `deno task release [--out FILE] [--worktree]
Builds the offline release archive (runtime, locked packages, program, unit, install.sh) from
HEAD (--worktree: with uncommitted changes) into dist/ (--out: another file).`;
  handleHelp(usage);
  const { values } = parseOrExit(usage, () =>
    parseArgs({
      args: Deno.args,
      options: { out: { type: "string" }, worktree: { type: "boolean" } },
    }));
  const log = (line: string) => {
    // deno-lint-ignore no-console
    console.error(line);
  };
  if (!values.worktree) {
    const dirty = (await run("git", ["status", "--porcelain", "--", ...SOURCE_PATHS], {
      cwd: ROOT,
    })).trim();
    if (dirty) {
      log("building HEAD: uncommitted changes are not included (--worktree includes them)");
    }
  }
  try {
    const release = await buildRelease({ outDir: values.out, worktree: values.worktree, log });
    // deno-lint-ignore no-console
    console.log(release.archive);
  } catch (error) {
    log(error instanceof Error ? error.message : String(error));
    Deno.exit(1);
  }
}

/**
 * The offline release (`deno task release`, scripts/release.ts): built once per run of this file
 * (about 20 s: it installs the Deno runtime and the product's npm packages from the local cache
 * or the registry and gzips ~170 MB, which is why this file is slow), then unpacked and run with
 * no network at all, inside `unshare -n` (a network namespace with only loopback), with an empty
 * HOME and DENO_DIR. Needs root for the namespace and for install.sh; says so when it skips.
 */
import assert from "node:assert/strict";
import { buildRelease, pinnedDenoVersion, type Release } from "../scripts/release.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const decoder = new TextDecoder();
const BINDINGS =
  "app/node_modules/.deno/@duckdb+node-bindings-linux-x64@1.5.5-r.5/node_modules/@duckdb/node-bindings-linux-x64";

/** Whether this machine can make a loopback-only network namespace (root, util-linux unshare). */
async function canUnshare(): Promise<boolean> {
  try {
    const probe = await new Deno.Command("unshare", {
      args: ["-n", "sh", "-c", "ip link set lo up"],
      stdout: "null",
      stderr: "null",
    }).output();
    return probe.success;
  } catch {
    return false;
  }
}

const unshare = await canUnshare();
const skipReason = unshare
  ? ""
  : " SKIPPED: `unshare -n` is unavailable here (needs root and util-linux)";

let built: Promise<{ release: Release; dir: string; root: string }> | null = null;

/** The release, built and unpacked once for all tests of this file. */
function unpackedRelease(): Promise<{ release: Release; dir: string; root: string }> {
  built ??= (async () => {
    // Traversable by other users: the install test runs the program as its service user.
    const dir = await Deno.makeTempDir({ prefix: "release-test-" });
    await Deno.chmod(dir, 0o755);
    const release = await buildRelease({ outDir: `${dir}/dist` });
    await run("tar", ["-xzf", release.archive, "-C", dir]);
    return { release, dir, root: `${dir}/${release.name}` };
  })();
  return built;
}

/** Runs a command; a non-zero exit throws unless `check` is false. */
async function run(
  command: string,
  args: string[],
  options: Deno.CommandOptions = {},
  check = true,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(command, {
    args,
    stdout: "piped",
    stderr: "piped",
    ...options,
  }).output();
  const result = {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
  if (check && output.code !== 0) {
    throw new Error(`${command} ${args.join(" ")}: exit ${output.code}\n${result.stderr}`);
  }
  return result;
}

/** Runs argv inside a new network namespace that has only loopback, up. */
function offline(argv: string[], options: Deno.CommandOptions = {}) {
  return run(
    "unshare",
    ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", ...argv],
    options,
    false,
  );
}

async function cleanup() {
  if (!built) return;
  const { dir } = await built;
  await Deno.remove(dir, { recursive: true });
}

Deno.test({
  name:
    `release archive: launcher, pinned runtime, program, unit, install.sh; only the product's npm packages${skipReason}`,
  ignore: !unshare,
  sanitizeResources: false,
  fn: async () => {
    const { release, root } = await unpackedRelease();
    for (
      const path of [
        "bin/agent-telemetry",
        "runtime/deno",
        "install.sh",
        "systemd/agent-telemetry.service",
        "app/main.ts",
        "app/src/store/sqlite/read_worker.ts",
        "app/src/store/sqlite/writer_worker.ts",
        "app/src/demo/mod.ts",
        "app/sql/sqlite/ingest.sql",
        "app/node_modules/@duckdb/node-api/package.json",
        `${BINDINGS}/duckdb.node`,
        `${BINDINGS}/libduckdb.so`,
      ]
    ) await Deno.stat(`${root}/${path}`);
    const pinned = pinnedDenoVersion(await Deno.readTextFile(`${ROOT}.ci/run`));
    const reported = await run(`${root}/runtime/deno`, ["--version"]);
    assert.match(reported.stdout, new RegExp(`^deno ${pinned.replaceAll(".", "\\.")} `));

    const config = JSON.parse(await Deno.readTextFile(`${root}/app/deno.json`));
    assert.equal(config.nodeModulesDir, "manual", "Deno must not install or fetch at run time");
    assert.deepEqual(Object.keys(config.imports).sort(), [
      "@bufbuild/protobuf",
      "@duckdb/node-api",
      "postgres",
      "uplot",
      "zod",
    ]);
    const shipped = release.packages.join(" ");
    assert.doesNotMatch(shipped, /@opentelemetry|@grpc|protobufjs/, "test-only packages shipped");
    assert.doesNotMatch(shipped, /musl|darwin|win32|arm64/, "other platforms' builds shipped");

    // The release lockfile is the project's, cut down: same integrity for every package.
    const projectLock = JSON.parse(await Deno.readTextFile(`${ROOT}deno.lock`));
    const releaseLock = JSON.parse(await Deno.readTextFile(`${root}/app/deno.lock`));
    const entries = Object.entries(releaseLock.npm) as [string, { integrity: string }][];
    for (const [name, entry] of entries) {
      assert.equal(entry.integrity, projectLock.npm[name]?.integrity, name);
    }
    assert.ok(releaseLock.npm["@duckdb/node-bindings-linux-x64@1.5.5-r.5"]);

    const manifest = JSON.parse(await Deno.readTextFile(`${root}/release.json`));
    assert.equal(manifest.deno, pinned);
    assert.match(manifest.source, /^[0-9a-f]{40}$/, "built from a commit");
    const writable = await run("find", [root, "-perm", "/022", "-not", "-type", "l"]);
    assert.equal(writable.stdout, "", "nothing in a release is group- or world-writable");
  },
});

Deno.test({
  name:
    `offline release: serve, org/member/key/actor create, one OTLP export and a query with no network${skipReason}`,
  ignore: !unshare,
  sanitizeResources: false,
  fn: async () => {
    const { dir, root } = await unpackedRelease();
    const work = await Deno.makeTempDir({ dir, prefix: "work-" });
    const home = await Deno.makeTempDir({ dir, prefix: "home-" });
    const denoDir = await Deno.makeTempDir({ dir, prefix: "deno-dir-" });
    const driverDenoDir = await Deno.makeTempDir({ dir, prefix: "driver-deno-dir-" });
    const driver = new URL("./_release_offline.ts", import.meta.url).pathname;
    const result = await offline([
      `${root}/runtime/deno`,
      "run",
      "--no-config",
      "--no-lock",
      "--allow-all",
      driver,
      root,
      work,
      home,
      denoDir,
    ], {
      env: { DENO_DIR: driverDenoDir, HOME: home, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
      clearEnv: true,
      cwd: work,
      signal: AbortSignal.timeout(90_000),
    });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
    assert.equal(report.version.service, "agent-telemetry");
    assert.match(report.org.id, /^org_/);
    assert.equal(report.healthz, 200);
    assert.deepEqual(report.export, { status: 200, body: "{}" });
    assert.equal(report.toolCalls.status, 200);
    assert.equal(report.toolCalls.body.data.length, 1, "the export was stored");
    assert.equal(report.toolCalls.body.data[0].tool_name, "Bash");
    assert.equal(report.toolCalls.body.data[0].actor_id, report.actorId);
    assert.equal(report.topTools.status, 200, "DuckDB's native addon loads from the release");
    assert.equal(report.topTools.body.summary.total_calls, 1);
    assert.equal(report.exitCode, 0, report.stderr);
    assert.doesNotMatch(report.stderr, /Download|registry|npm package/i);
    // Nothing was fetched into the empty DENO_DIR: its npm cache was never needed.
    const cached = [];
    try {
      for await (const entry of Deno.readDir(`${denoDir}/npm`)) cached.push(entry.name);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    assert.deepEqual(cached, []);
  },
});

Deno.test({
  name:
    `install.sh: prefix, system user, data dir 0700, unit with its paths; idempotent; runs offline as that user${skipReason}`,
  ignore: !unshare || Deno.uid() !== 0,
  sanitizeResources: false,
  fn: async () => {
    const { dir, root } = await unpackedRelease();
    const base = await Deno.makeTempDir({ dir, prefix: "install-" });
    await Deno.chmod(base, 0o755);
    const user = `at-test-${crypto.randomUUID().slice(0, 8)}`;
    const args = [
      "--prefix",
      `${base}/opt/agent-telemetry`,
      "--data",
      `${base}/var/agent-telemetry`,
      "--config-dir",
      `${base}/etc/agent-telemetry`,
      "--unit-dir",
      `${base}/units`,
      "--user",
      user,
    ];
    try {
      const first = await run(`${root}/install.sh`, args);
      assert.match(first.stdout, new RegExp(`created system user ${user}`));
      const unitPath = `${base}/units/agent-telemetry.service`;
      const unit = await Deno.readTextFile(unitPath);
      const second = await run(`${root}/install.sh`, args);
      assert.doesNotMatch(second.stdout, /created system user/, "the user is created once");
      assert.equal(await Deno.readTextFile(unitPath), unit, "a rerun writes the same unit");

      assert.match(
        unit,
        new RegExp(
          `^ExecStart=${base}/opt/agent-telemetry/bin/agent-telemetry serve --data ${base}/var/agent-telemetry `,
          "m",
        ),
      );
      assert.match(unit, new RegExp(`--tls-cert ${base}/etc/agent-telemetry/tls.crt`));
      assert.match(unit, new RegExp(`^User=${user}$`, "m"));
      assert.match(unit, new RegExp(`^ReadWritePaths=${base}/var/agent-telemetry$`, "m"));
      assert.doesNotMatch(unit, /^StateDirectory/m, "StateDirectory= only under /var/lib");

      const data = await Deno.stat(`${base}/var/agent-telemetry`);
      assert.equal(data.mode! & 0o777, 0o700);
      const uid = Number((await run("id", ["-u", user])).stdout.trim());
      assert.equal(data.uid, uid);
      const prefix = await Deno.stat(`${base}/opt/agent-telemetry/runtime/deno`);
      assert.equal(prefix.uid, 0, "the program is root's: the service cannot rewrite it");
      assert.equal(prefix.mode! & 0o022, 0);
      const leftovers = await run("find", [`${base}/opt/agent-telemetry`, "-name", ".install.*"]);
      assert.equal(leftovers.stdout, "", "no staging directory is left behind");

      // The service user runs the installed program with no network, no HOME, no DENO_DIR.
      const created = await offline([
        "setpriv",
        `--reuid=${user}`,
        `--regid=${user}`,
        "--clear-groups",
        `${base}/opt/agent-telemetry/bin/agent-telemetry`,
        "org",
        "create",
        "--name",
        "Acme",
        "--data",
        `${base}/var/agent-telemetry`,
        "--json",
      ], { env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, clearEnv: true, cwd: "/" });
      assert.equal(created.code, 0, created.stderr);
      assert.match(JSON.parse(created.stdout).id, /^org_/);
    } finally {
      await run("userdel", [user], {}, false);
      await run("groupdel", [user], {}, false); // gone with the user where USERGROUPS_ENAB is on
    }
  },
});

Deno.test({
  name: "systemd unit: systemd-analyze security rates it at most 2.5",
  ignore: !(await canRun("systemd-analyze")),
  fn: async () => {
    const unit = new URL("../deploy/agent-telemetry.service", import.meta.url).pathname;
    const result = await run("systemd-analyze", ["security", "--offline=yes", unit], {}, false);
    const level = /Overall exposure level for \S+: ([\d.]+)/.exec(result.stdout);
    assert.ok(level, result.stdout + result.stderr);
    assert.ok(Number(level[1]) <= 2.5, `exposure ${level[1]}`);
  },
});

Deno.test({ name: "release test: remove the build", fn: cleanup, sanitizeResources: false });

async function canRun(command: string): Promise<boolean> {
  try {
    return (await new Deno.Command(command, { args: ["--version"], stdout: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

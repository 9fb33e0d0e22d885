/**
 * Builds the single executable and runs it, when a `denort` base binary is
 * available (`DENORT_BIN`); these machines cannot download one, so the test
 * says clearly that it skipped otherwise.
 */
import assert from "node:assert/strict";
import { compileArgs, FOLDERS, WORKERS } from "../scripts/compile.ts";
import { workerModules } from "../scripts/release.ts";

const denort = Deno.env.get("DENORT_BIN");
const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("compile arguments embed the workers and exclude other platforms' DuckDB builds", () => {
  const args = compileArgs("dist/x");
  assert.ok(args.includes("--self-extracting"));
  assert.ok(!args.includes("--allow-all") && !args.includes("-A"), "minimal permissions");
  assert.ok(args.includes("src/store/sqlite/read_worker.ts"));
  assert.ok(args.includes("src/store/sqlite/writer_worker.ts"));
  assert.ok(args.some((a) => a.includes("linux-x64-musl")), "the musl build is excluded");
  assert.ok(!args.some((a) => a.endsWith("node-bindings-linux-x64@1.5.5-r.5")), "ours is kept");
});

Deno.test("every worker src/ starts is embedded by compile", async () => {
  const started = new Set<string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts")) {
        for (const worker of workerModules(await Deno.readTextFile(`${ROOT}${path}`))) {
          started.add(new URL(worker, `file:///${path}`).pathname.slice(1));
        }
      }
    }
  };
  await walk("src");
  assert.deepEqual([...started].sort(), [...WORKERS].sort());
});

Deno.test("every folder src/ reads files from is embedded by compile", async () => {
  const read = new Set<string>();
  const folderUrl = /new\s+URL\(\s*"(\.{1,2}\/[^"]*\/)"\s*,\s*import\.meta\.url\s*\)/g;
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts")) {
        for (const [, folder] of (await Deno.readTextFile(`${ROOT}${path}`)).matchAll(folderUrl)) {
          read.add(new URL(folder!, `file:///${path}`).pathname.slice(1).replace(/\/$/, ""));
        }
      }
    }
  };
  await walk("src");
  assert.ok(read.has("sql/sqlite") && read.has("sql/postgres"), "the migration folders are read");
  assert.deepEqual([...read].sort(), [...FOLDERS].sort());
  const args = compileArgs("dist/x");
  for (const folder of FOLDERS) assert.ok(args.includes(folder), `${folder} is not included`);
});

async function canUnshare(): Promise<boolean> {
  try {
    return (await new Deno.Command("unshare", {
      args: ["-n", "true"],
      stdout: "null",
      stderr: "null",
    }).output()).success;
  } catch {
    return false;
  }
}

Deno.test({
  name: (await canUnshare())
    ? "compile with no network and no DENORT_BIN ends with one line naming DENORT_BIN"
    : "compile without network SKIPPED: `unshare -n` is unavailable here (needs root)",
  ignore: !(await canUnshare()),
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      // An empty DENO_DIR, so no denort downloaded earlier is found in its cache.
      const env: Record<string, string> = { ...Deno.env.toObject(), DENO_DIR: `${dir}/deno-dir` };
      delete env.DENORT_BIN;
      const result = await new Deno.Command("unshare", {
        args: [
          "-n",
          Deno.execPath(),
          "run",
          "-A",
          `${ROOT}scripts/compile.ts`,
          `${dir}/agent-telemetry`,
        ],
        cwd: ROOT,
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(result.stderr).trim();
      assert.notEqual(result.code, 0);
      assert.equal(stderr.split("\n").length, 1, stderr);
      assert.match(stderr, /set DENORT_BIN to its path/);
      assert.doesNotMatch(stderr, /backtrace|Caused by/i);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: denort
    ? "the compiled binary runs version, serve, /healthz and an insight"
    : "compiled binary test SKIPPED: DENORT_BIN is not set (no denort base binary on this machine)",
  ignore: !denort,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const binary = `${dir}/agent-telemetry`;
      const build = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL("../scripts/compile.ts", import.meta.url).pathname, binary],
        cwd: new URL("..", import.meta.url).pathname,
      }).output();
      assert.equal(build.code, 0, new TextDecoder().decode(build.stderr));
      const version = await new Deno.Command(binary, { args: ["version", "--json"] }).output();
      assert.equal(JSON.parse(new TextDecoder().decode(version.stdout)).service, "agent-telemetry");
      const org = JSON.parse(new TextDecoder().decode(
        (await new Deno.Command(binary, {
          args: ["org", "create", "--name", "A", "--data", `${dir}/d`, "--json"],
        }).output()).stdout,
      ));
      const member = JSON.parse(new TextDecoder().decode(
        (await new Deno.Command(binary, {
          args: [
            "member",
            "add",
            "--org",
            org.id,
            "--email",
            "a@a.a",
            "--data",
            `${dir}/d`,
            "--json",
          ],
        }).output()).stdout,
      ));
      const key = JSON.parse(new TextDecoder().decode(
        (await new Deno.Command(binary, {
          args: [
            "key",
            "create",
            "--org",
            org.id,
            "--member",
            member.id,
            "--data",
            `${dir}/d`,
            "--json",
          ],
        }).output()).stdout,
      ));
      const child = new Deno.Command(binary, {
        args: [
          "serve",
          "--data",
          `${dir}/d`,
          "--listen",
          "127.0.0.1:0",
          "--ingest-listen",
          "127.0.0.1:0",
          "--grpc-listen",
          "127.0.0.1:0",
        ],
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes("OTLP ingest listening")) out += (await reader.read()).value ?? "";
      await reader.cancel();
      const base = /query API listening on (\S+)/.exec(out)![1];
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const insight = await fetch(`${base}/v1/insights/activity`, {
        headers: { authorization: `Bearer ${key.key}` },
      });
      assert.equal(insight.status, 200);
      await insight.body?.cancel();
      child.kill("SIGTERM");
      assert.equal((await child.status).code, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

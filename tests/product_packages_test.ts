/**
 * A fresh clone's `deno task demo` and `deno task start` fetch the product's npm packages and
 * nothing else (issue #34): Deno fetches every package of the lockfile in effect, so they run with
 * `deno.product.jsonc` and `deno.product.lock` (scripts/product_packages.ts says why), and the
 * project's config keeps `deno task` from installing anything first.
 */
import assert from "node:assert/strict";
import { PRODUCT_CONFIG, PRODUCT_LOCK, productFiles } from "../scripts/product_packages.ts";
import { type Lockfile, packageName } from "../scripts/release.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const decoder = new TextDecoder();

interface Task {
  command: string;
  dependencies?: string[];
}

async function projectConfig(): Promise<
  { nodeModulesDir: string; tasks: Record<string, Task>; imports: Record<string, string> }
> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
}

Deno.test("deno.product.jsonc and deno.product.lock hold the npm packages main.ts's module graph reaches, locked as deno.lock locks them", async () => {
  const expected = await productFiles();
  const hint = "run deno run -A scripts/product_packages.ts";
  assert.equal(await Deno.readTextFile(`${ROOT}${PRODUCT_CONFIG}`), expected.config, hint);
  assert.equal(await Deno.readTextFile(`${ROOT}${PRODUCT_LOCK}`), expected.lock, hint);
  // The product's packages by name, so a test-only package reached by the program is seen here.
  assert.deepEqual(Object.keys(expected.imports), [
    "@bufbuild/protobuf",
    "@duckdb/node-api",
    "postgres",
    "uplot",
    "zod",
  ]);
  const project = await projectConfig();
  for (const [name, specifier] of Object.entries(expected.imports)) {
    assert.equal(project.imports[name], specifier, name);
  }
});

Deno.test("deno task demo, start and cli run with the product's config; every other task installs the locked packages first", async () => {
  const project = await projectConfig();
  // "auto" and "none" make `deno task` fetch every import of deno.json before any task runs.
  assert.equal(project.nodeModulesDir, "manual");
  assert.equal(project.tasks.install?.command, "deno install --frozen");
  for (const [name, task] of Object.entries(project.tasks)) {
    if (name === "install") continue;
    if (["demo", "start", "cli"].includes(name)) {
      assert.match(task.command, new RegExp(`^deno run --allow-all --config ${PRODUCT_CONFIG} `));
      assert.equal(task.dependencies, undefined, name);
    } else {
      assert.deepEqual(task.dependencies, ["install"], name);
    }
  }
});

/** Where this machine's Deno keeps npm packages (`deno info`'s `npmCache`). */
async function npmCache(): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return JSON.parse(decoder.decode(output.stdout)).npmCache;
}

Deno.test("the demo runs from a cache holding only the product lock's packages and prints its key and the dashboard's address within its first 20 lines", async () => {
  const work = await Deno.makeTempDir({ prefix: "agent-telemetry-product-" });
  try {
    // A DENO_DIR with the product lock's packages for this platform and nothing else; with
    // --cached-only, a package outside it would fail the run instead of being fetched.
    const lock = JSON.parse(await Deno.readTextFile(`${ROOT}${PRODUCT_LOCK}`)) as Lockfile;
    const from = `${await npmCache()}/registry.npmjs.org`;
    const to = `${work}/deno/npm/registry.npmjs.org`;
    let copied = 0;
    for (const key of Object.keys(lock.npm)) {
      const name = packageName(key);
      const version = key.slice(name.length + 1).split("_")[0]!;
      try {
        await Deno.stat(`${from}/${name}/${version}`);
      } catch {
        continue; // another platform's binding, never installed here
      }
      await Deno.mkdir(`${to}/${name}`, { recursive: true });
      const cp = await new Deno.Command("cp", {
        args: ["-a", `${from}/${name}/${version}`, `${to}/${name}/`],
      }).output();
      assert.ok(cp.success, decoder.decode(cp.stderr));
      copied++;
    }
    assert.ok(copied >= Object.keys(lock.specifiers).length, `copied ${copied} packages`);

    // As `deno task demo` runs it, stderr and stdout in one stream as a terminal shows them.
    const child = new Deno.Command("sh", {
      args: [
        "-c",
        'exec "$0" "$@" 2>&1',
        Deno.execPath(),
        "run",
        "--cached-only",
        "--allow-all",
        "--config",
        `${ROOT}${PRODUCT_CONFIG}`,
        `${ROOT}main.ts`,
        "demo",
        "--data",
        `${work}/data`,
        "--actors",
        "1",
        "--days",
        "2",
        "--listen",
        "127.0.0.1:0",
        "--ingest-listen",
        "127.0.0.1:0",
        "--grpc-listen",
        "127.0.0.1:0",
      ],
      cwd: work,
      env: { DENO_DIR: `${work}/deno`, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let out = "";
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    try {
      while (!/Press Ctrl-C/.test(out)) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
    } finally {
      clearTimeout(timer);
      await reader.cancel();
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone: its output says why
      }
      await child.status;
    }
    const lines = out.split("\n");
    const key = lines.findIndex((line) => /^Demo API key: wb_api_\w+$/.test(line));
    const dashboard = lines.findIndex((line) =>
      /^Dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\//.test(line)
    );
    assert.ok(key >= 0 && dashboard >= 0, out);
    // A fresh machine prints the task's line and 14 download lines before the program's first
    // (the product lock's packages): the key and the dashboard must come within 5 lines of it to
    // be seen in the first 20 (issue #34).
    const downloadsOnAFreshMachine = 15;
    assert.ok(
      dashboard + downloadsOnAFreshMachine < 20,
      `the dashboard's address is the program's line ${dashboard + 1}:\n${out}`,
    );
    assert.doesNotMatch(out, /^Download /m);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

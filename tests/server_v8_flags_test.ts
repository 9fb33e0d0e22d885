/**
 * V8's heap limits can only be given when the process starts (issue #31):
 * every way of launching the server passes the same flags, those of
 * `SERVER_V8_FLAGS` (src/memory_budget.ts), and a process started with them
 * keeps V8's young generation small.
 */
import assert from "node:assert/strict";
import { SERVER_V8_FLAGS } from "../src/memory_budget.ts";
import { compileArgs } from "../scripts/compile.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const FLAG = `--v8-flags=${SERVER_V8_FLAGS.join(",")}`;

Deno.test("deno.json's start, demo and cli tasks pass the server's V8 flags", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  for (const name of ["start", "demo", "cli"]) {
    const command: string = tasks[name].command;
    assert.ok(command.split(" ").includes(FLAG), `task ${name}: ${command}`);
  }
});

Deno.test("the release's launcher passes the server's V8 flags", async () => {
  const launcher = await Deno.readTextFile(`${ROOT}deploy/launcher.sh`);
  assert.ok(launcher.split(/\s+/).includes(FLAG), "deploy/launcher.sh");
});

Deno.test("the compiled executable embeds the server's V8 flags", () => {
  assert.ok(compileArgs("dist/x").includes(FLAG));
});

/**
 * The young generation's median size while objects survive a scavenge or
 * two (a ring of 100k of them, as requests in flight keep theirs), in MiB.
 */
const CHURN = `
  import v8 from "node:v8";
  const ring = new Array(100_000);
  const sizes = [];
  for (let i = 0; i < 3_000_000; i++) {
    ring[i % ring.length] = { i, text: "x" + i };
    if (i % 10_000 === 0) {
      const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
      sizes.push(young.space_size);
    }
  }
  sizes.sort((a, b) => a - b);
  console.log(sizes[sizes.length >> 1] / 2 ** 20);`;

async function youngGenerationMiB(flags: string[]): Promise<number> {
  const env = Deno.env.toObject();
  delete env.DENO_V8_FLAGS;
  const { stdout, success } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...flags, CHURN],
    clearEnv: true,
    env,
    stderr: "inherit",
  }).output();
  assert.ok(success);
  return Number(new TextDecoder().decode(stdout).trim());
}

Deno.test("the flags keep V8's young generation near 8 MiB instead of tens", async () => {
  assert.ok(await youngGenerationMiB([]) >= 24, "V8's default grows it to tens of MiB");
  assert.ok(await youngGenerationMiB([FLAG]) <= 12);
});

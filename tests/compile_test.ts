/**
 * Builds the single executable and runs it, when a `denort` base binary is
 * available (`DENORT_BIN`); these machines cannot download one, so the test
 * says clearly that it skipped otherwise.
 */
import assert from "node:assert/strict";
import { compileArgs } from "../scripts/compile.ts";

const denort = Deno.env.get("DENORT_BIN");

Deno.test("compile arguments embed the worker and exclude other platforms' DuckDB builds", () => {
  const args = compileArgs("dist/x");
  assert.ok(args.includes("--self-extracting"));
  assert.ok(!args.includes("--allow-all") && !args.includes("-A"), "minimal permissions");
  assert.ok(args.includes("src/store/read_worker.ts"));
  assert.ok(args.some((a) => a.includes("linux-x64-musl")), "the musl build is excluded");
  assert.ok(!args.some((a) => a.endsWith("node-bindings-linux-x64@1.5.5-r.5")), "ours is kept");
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

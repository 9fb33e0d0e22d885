/**
 * Runs inside a loopback-only network namespace, under the release's own Deno runtime (see
 * tests/release_test.ts): drives an unpacked release's `bin/agent-telemetry` through org, member,
 * key and actor creation, `serve`, one OTLP/HTTP export, a list query and an insight, and prints
 * what it saw as one JSON object on stdout. It imports nothing from npm, so it runs offline too.
 *
 * Usage: deno run -A _release_offline.ts RELEASE_DIR WORK_DIR HOME_DIR DENO_DIR
 *
 * @module
 */

import { claudeExport, toolResult } from "./_otlp.ts";

const [release, work, home, denoDir] = Deno.args as [string, string, string, string];
const bin = `${release}/bin/agent-telemetry`;
const data = `${work}/data`;
// The program sees only these: an empty HOME and DENO_DIR, no proxy, no registry settings.
const env = { HOME: home, DENO_DIR: denoDir, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

async function cli(...args: string[]): Promise<Record<string, string>> {
  const output = await new Deno.Command(bin, {
    args: [...args, "--data", data, "--json"],
    cwd: work,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(
      `${args.join(" ")}: exit ${output.code}\n${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return JSON.parse(stdout);
}

const version = await cli("version");
const org = await cli("org", "create", "--name", "Offline");
const member = await cli("member", "add", "--org", org.id!, "--email", "ops@offline.test");
const key = await cli("key", "create", "--org", org.id!, "--member", member.id!);
const actor = await cli("actor", "create", "--org", org.id!, "--name", "air-gapped-laptop");

const server = new Deno.Command(bin, {
  args: [
    "serve",
    "--data",
    data,
    "--listen",
    "127.0.0.1:0",
    "--ingest-listen",
    "127.0.0.1:0",
    "--grpc-listen",
    "127.0.0.1:0",
  ],
  cwd: work,
  env,
  clearEnv: true,
  stdout: "piped",
  stderr: "piped",
}).spawn();
const stderrText = new Response(server.stderr).text();
const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
let stdout = "";
while (!stdout.includes("OTLP ingest listening")) {
  const { value, done } = await reader.read();
  if (done) break;
  stdout += value;
}
const api = /query API listening on (\S+)/.exec(stdout)?.[1];
const ingest = /OTLP ingest listening on (\S+)/.exec(stdout)?.[1];

const report: Record<string, unknown> = { version, org, actorId: actor.actor_id, stdout };
try {
  if (!api || !ingest) throw new Error(`no listener lines in: ${stdout}`);
  const health = await fetch(`${api}/healthz`);
  report.healthz = health.status;
  await health.body?.cancel();
  const exported = await fetch(`${ingest}/v1/logs`, {
    method: "POST",
    headers: { authorization: `Bearer ${actor.ingest_key}`, "content-type": "application/json" },
    body: JSON.stringify(claudeExport([
      toolResult({ session: "s-offline", id: "t1", tool: "Bash", timeMs: Date.now() - 60_000 }),
    ])),
  });
  report.export = { status: exported.status, body: await exported.text() };
  const auth = { authorization: `Bearer ${key.key}` };
  const calls = await fetch(`${api}/v1/tool-calls`, { headers: auth });
  report.toolCalls = { status: calls.status, body: await calls.json() };
  const insight = await fetch(`${api}/v1/insights/top-tools`, { headers: auth });
  report.topTools = { status: insight.status, body: await insight.json() };
} finally {
  await reader.cancel();
  server.kill("SIGTERM");
  report.exitCode = (await server.status).code;
  report.stderr = await stderrText;
}
// deno-lint-ignore no-console
console.log(JSON.stringify(report));

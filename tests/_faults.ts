/**
 * Helpers for fault tests: a server started inside its own mount namespace
 * (so a small tmpfs or a read-only bind mount exists for it alone), commands
 * run inside that namespace, and reads that count what the API holds.
 * Mount namespaces need root and `unshare`; {@link canMount} says whether
 * this machine has them.
 *
 * @module
 */
import { listenerUrl } from "./_harness.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** Whether this process may create mount namespaces (root with `unshare` and `nsenter`). */
export const canMount: boolean = (() => {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  try {
    const probe = new Deno.Command("unshare", { args: ["-m", "true"], stderr: "null" })
      .outputSync();
    const enter = new Deno.Command("nsenter", { args: ["--version"], stdout: "null" })
      .outputSync();
    return probe.success && enter.success;
  } catch {
    return false;
  }
})();

/** A server process in its own mount namespace. */
export interface NamespacedServer extends AsyncDisposable {
  pid: number;
  queryUrl: string;
  ingestUrl: string;
  /** What the server wrote on stderr so far (logs). */
  stderr(): string;
  /** Runs a shell script inside the server's mount namespace; resolves with its exit code. */
  inside(script: string, ...args: string[]): Promise<number>;
}

/**
 * Runs `setup` (a shell script; `$1…` are `args`) in a new mount namespace,
 * then `serve` on ephemeral loopback ports with `serveArgs` in that namespace.
 * Resolves once both listeners are up; rejects with stderr if it exits first.
 */
export async function spawnNamespacedServer(
  setup: string,
  args: string[],
  serveArgs: string[],
): Promise<NamespacedServer> {
  const script = `${setup}\nexec "$0" run --allow-all ${MAIN} serve ` +
    `--listen 127.0.0.1:0 --ingest-listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 "$@"`;
  const child = new Deno.Command("unshare", {
    args: ["-m", "sh", "-c", script, Deno.execPath(), ...args, ...serveArgs],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let stderr = "";
  const stderrDone = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  while (!/OTLP ingest listening on \S+\n/.test(stdout)) {
    const { value, done } = await reader.read();
    if (done) break;
    stdout += value;
  }
  await reader.cancel();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    await child.status;
    await stderrDone;
  };
  if (!/OTLP ingest listening on/.test(stdout)) {
    await stop();
    throw new Error(`Server did not start: ${stderr}`);
  }
  return {
    pid: child.pid,
    queryUrl: listenerUrl(stdout, "query API"),
    ingestUrl: listenerUrl(stdout, "OTLP ingest"),
    stderr: () => stderr,
    async inside(body: string, ...scriptArgs: string[]) {
      const output = await new Deno.Command("nsenter", {
        args: ["-t", String(child.pid), "-m", "sh", "-c", body, "sh", ...scriptArgs],
        stdout: "null",
        stderr: "null",
      }).output();
      return output.code;
    },
    [Symbol.asyncDispose]: stop,
  };
}

/** Every tool call the query API lists for an organization (all pages): id and session. */
export async function listedToolCalls(
  queryUrl: string,
  apiKey: string,
): Promise<{ id: string; session_id: string }[]> {
  const calls: { id: string; session_id: string }[] = [];
  let cursor: string | null = null;
  do {
    const url: string = `${queryUrl}/v1/tool-calls?limit=500` +
      (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
    const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = await response.json();
    if (response.status !== 200) throw new Error(`Listing failed: ${JSON.stringify(body)}`);
    for (const call of body.data) calls.push({ id: call.id, session_id: call.session_id });
    cursor = body.next_cursor ?? null;
  } while (cursor !== null);
  return calls;
}

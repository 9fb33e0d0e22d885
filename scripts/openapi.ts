/**
 * `deno task openapi`: writes `docs/openapi.json`, the query API's OpenAPI
 * document exactly as the server serves it at `/v1/openapi.json`: a server
 * is started over an empty temporary data directory on loopback, asked, and
 * stopped. `tests/openapi_test.ts` fails while the committed file differs.
 *
 * @module
 */
// deno-lint-ignore-file no-console
import { parseArgs } from "node:util";
import { resolveServeConfig } from "../src/config.ts";
import { startServer } from "../src/server/server.ts";
import { handleHelp, parseOrExit } from "./_script_args.ts";

const USAGE =
  "deno task openapi: writes docs/openapi.json, the OpenAPI document the server serves at /v1/openapi.json";

/** Where the document is committed. */
export const OPENAPI_FILE = new URL("../docs/openapi.json", import.meta.url).pathname;

/** The document as the file holds it: two-space JSON and a final newline. */
export function openApiFileText(document: unknown): string {
  return JSON.stringify(document, null, 2) + "\n";
}

/** The document a server over an empty data directory serves. */
async function servedDocument(): Promise<unknown> {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-openapi-" });
  try {
    const config = resolveServeConfig({
      data: dir,
      listen: "127.0.0.1:0",
      ingestListen: "127.0.0.1:0",
      grpcListen: "off",
      logLevel: "error",
    }, () => undefined);
    const server = await startServer(config, { quiet: true, replicaFollowMs: null });
    try {
      const response = await fetch(`${server.queryUrl}/v1/openapi.json`);
      if (!response.ok) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
      return await response.json();
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  handleHelp(USAGE);
  parseOrExit(USAGE, () => parseArgs({ args: Deno.args, options: {}, strict: true }));
  await Deno.writeTextFile(OPENAPI_FILE, openApiFileText(await servedDocument()));
  console.log(`wrote ${OPENAPI_FILE}`);
}

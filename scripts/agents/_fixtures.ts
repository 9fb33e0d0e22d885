/**
 * Recorded agent runs on disk: `tests/fixtures/agents/real/<agent>-<version>/<variant>/`
 * holds `requests.json` (the requests in the order they were sent) and one
 * `NNN.bin` body per request, byte for byte as the agent sent it. The
 * ordinary test suite replays them without npm or network.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import type { RecordedRequest } from "./_recorder.ts";

/** The folder all recorded runs live under. */
export const REAL_FIXTURES = fromFileUrl(
  new URL("../../tests/fixtures/agents/real/", import.meta.url),
);

interface ManifestEntry {
  file: string;
  path: string;
  contentType: string;
  contentEncoding: string | null;
  transport: "http" | "grpc";
  status: number;
}

/** Writes one run's requests, replacing what was recorded before for it. */
export async function writeRecording(dir: string, requests: RecordedRequest[]): Promise<void> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const manifest: ManifestEntry[] = [];
  for (const [i, request] of requests.entries()) {
    const file = `${String(i).padStart(3, "0")}.bin`;
    await Deno.writeFile(join(dir, file), request.body);
    const { body: _body, ...rest } = request;
    manifest.push({ file, ...rest });
  }
  await Deno.writeTextFile(join(dir, "requests.json"), JSON.stringify(manifest, null, 2) + "\n");
}

/** Reads one run's requests in the order they were sent. */
export async function readRecording(dir: string): Promise<RecordedRequest[]> {
  const manifest = JSON.parse(
    await Deno.readTextFile(join(dir, "requests.json")),
  ) as ManifestEntry[];
  return await Promise.all(manifest.map(async ({ file, ...rest }) => ({
    ...rest,
    body: await Deno.readFile(join(dir, file)),
  })));
}

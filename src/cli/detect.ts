/**
 * `detect rescan`: runs the current detection rules over every stored tool
 * call, so old data gets new rules. Flags and domain hits are replaced, not
 * duplicated; works while the server runs (one short transaction per batch).
 *
 * @module
 */
import { openRescanner } from "../store/open_stores.ts";
import { databaseOf, dataDirOf, parseFlags, printResult, UsageError } from "./usage.ts";

const BATCH = 1000;

/** Runs `detect <action>`. */
export async function runDetect(action: string | undefined, args: string[]): Promise<void> {
  if (action !== "rescan") {
    throw new UsageError(`Unknown command: "${`detect ${action ?? ""}`.trim()}"`);
  }
  const flags = parseFlags(args, {
    "keep-secrets": { type: "boolean" },
    database: { type: "string" },
  });
  const store = await openRescanner(dataDirOf(flags), databaseOf(flags), {
    redactSecrets: !flags["keep-secrets"],
  });
  try {
    let scanned = 0;
    let after = "";
    for (;;) {
      const batch = await store.rescanBatch(after, BATCH);
      scanned += batch.scanned;
      if (batch.lastId === null) break;
      after = batch.lastId;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    printResult({ scanned }, flags.json);
  } finally {
    await store.close();
  }
}

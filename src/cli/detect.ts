/**
 * `detect rescan`: runs the current detection rules over every stored tool
 * call, so old data gets new rules. Flags and domain hits are replaced, not
 * duplicated; works while the server runs (one short transaction per batch).
 *
 * @module
 */
import { openRescanner } from "../store/open_stores.ts";
import { type CommandDef, DATA_FLAG, DATABASE_FLAG, JSON_FLAG } from "./flags.ts";
import { commandStore } from "./store_presence.ts";
import { printResult } from "./usage.ts";

const BATCH = 1000;

/** `detect rescan`: prints how many calls it scanned. */
export const detectRescanCommand: CommandDef = {
  name: "detect rescan",
  summary: "run the current detection rules over every stored tool call",
  flags: [
    {
      name: "keep-secrets",
      description: "flag secrets but leave stored texts as they are (default: redact them)",
    },
    { ...DATA_FLAG, description: "data directory holding telemetry.db (refused when missing)" },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  async run(flags) {
    const { dir, database } = commandStore(flags, "any");
    // A store that has received no telemetry yet: nothing to scan, nothing to create.
    if (database === null && !exists(`${dir}/telemetry.db`)) {
      return printResult({ scanned: 0 }, flags.json);
    }
    const store = await openRescanner(dir, database, { redactSecrets: !flags.on("keep-secrets") });
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
  },
};

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

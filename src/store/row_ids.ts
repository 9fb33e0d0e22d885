/**
 * Row ids of the ingest write path: stable (the same event always lands on
 * the same row, so a retried export stores nothing twice) and grouped by
 * session in the id index.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { TelemetryEvent } from "../model/telemetry.ts";
import type { Sender } from "./stores.ts";

/** A stable row id from the organization, session and the event's identity. */
export function deriveRowId(prefix: string, orgId: string, sessionId: string, identity: string) {
  return `${prefix}_${sessionKey(orgId, sessionId)}${
    hex(`${orgId}\u0000${sessionId}\u0000${identity}`, 20)
  }`;
}

/**
 * 12 hex digits naming a session. They open its rows' ids, so one session's
 * rows sit together in the id index: an export touches a few index pages per
 * session instead of one random page per row (random keys made ingest slow
 * down as the table grew).
 */
export function sessionKey(orgId: string, sessionId: string): string {
  const key = `${orgId}\u0000${sessionId}`;
  let cached = sessionKeys.get(key);
  if (cached === undefined) {
    if (sessionKeys.size >= 4096) sessionKeys.clear();
    cached = hex(key, 12);
    sessionKeys.set(key, cached);
  }
  return cached;
}

const sessionKeys = new Map<string, string>();

function hex(text: string, digits: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, digits);
}

/** The row id each event would store under (`""` for session facts, which have none). */
export function eventRowIds(sender: Sender, events: readonly TelemetryEvent[]): string[] {
  return events.map((event) =>
    event.kind === "session_info" ? "" : deriveRowId(
      event.kind === "model_call" ? "mc" : "tc",
      sender.orgId,
      event.sessionId,
      event.identity,
    )
  );
}

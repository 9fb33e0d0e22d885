/**
 * Records that stored nothing are made visible: counted in `/metrics` by
 * agent and reason, and logged once per (agent, reason, event name) at info
 * level, so "my agent sends nothing" is diagnosable in one look.
 *
 * @module
 */
import type { UnmappedRecords } from "../model/unmapped.ts";
import { log } from "../log.ts";
import type { ServiceMetrics } from "../http/metrics.ts";

/** How many distinct (agent, reason, event name) triples are remembered as logged. */
const MAX_REMEMBERED = 1_000;
/** Event names are the sender's text: only this much of one is logged. */
const MAX_LOGGED_NAME = 120;

const logged = new Set<string>();

/** Counts an export's unmapped records and logs each new kind of them once. */
export function reportUnmapped(metrics: ServiceMetrics, unmapped: readonly UnmappedRecords[]) {
  for (const { agent, reason, eventName, count } of unmapped) {
    metrics.unmapped.inc({ agent, reason }, count);
    const key = `${agent}\u0000${reason}\u0000${eventName}`;
    if (logged.has(key) || logged.size >= MAX_REMEMBERED) continue;
    logged.add(key);
    log("info", "OTLP records stored nothing", {
      agent,
      reason,
      event_name: eventName.slice(0, MAX_LOGGED_NAME),
    });
  }
}

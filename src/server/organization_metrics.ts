/**
 * The per-organization series of `/metrics`: reported model cost, risk flags
 * by kind and tool-call errors, counted from what each accepted export
 * committed (the store's {@link IngestSummary}: a retried export or a call
 * already stored adds nothing, a refused export is never counted), and when
 * the organization's last export was accepted. They are kept in memory: a
 * restart starts the counters again from zero, which Prometheus's `rate()`
 * and `increase()` take as a counter reset.
 *
 * @module
 */
import { FLAG_KINDS } from "../detect/mod.ts";
import type { ServiceMetrics } from "../http/metrics.ts";
import type { IngestSummary } from "../store/stores.ts";

/**
 * Creates an organization's counters at zero (a no-op when they exist), so
 * that Prometheus sees their first increase: a counter first scraped at 5
 * counts those 5 in no `increase()`.
 */
export function openOrganizationSeries(metrics: ServiceMetrics, orgId: string): void {
  metrics.modelCost.inc({ org: orgId }, 0);
  metrics.toolCallErrors.inc({ org: orgId }, 0);
  for (const kind of FLAG_KINDS) metrics.riskFlags.inc({ org: orgId, kind }, 0);
}

/** Counts what one accepted export of `orgId` committed, accepted at `nowMs`. */
export function countCommitted(
  metrics: ServiceMetrics,
  orgId: string,
  summary: IngestSummary,
  nowMs: number,
): void {
  openOrganizationSeries(metrics, orgId);
  if (summary.costUsd > 0) metrics.modelCost.inc({ org: orgId }, summary.costUsd);
  if (summary.toolCallErrors > 0) {
    metrics.toolCallErrors.inc({ org: orgId }, summary.toolCallErrors);
  }
  for (const kind of FLAG_KINDS) {
    const flags = summary.riskFlags[kind] ?? 0;
    if (flags > 0) metrics.riskFlags.inc({ org: orgId, kind }, flags);
  }
  metrics.lastExport.set({ org: orgId }, nowMs / 1000);
}

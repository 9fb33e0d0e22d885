/**
 * What sessions' model calls cost beside the cost they reported: the
 * estimate of the calls that reported none and where a session's cost comes
 * from (docs/api.md §2.3, docs/design.md §9), kept on each session's row.
 *
 * @module
 */

/** Where a cost comes from: the agent, the price table, or nowhere. */
export type CostSource = "reported" | "estimated" | "none";

/** A session's estimate and the source of its cost. */
export interface SessionCost {
  estimatedCostUsd: number;
  costSource: CostSource;
}

/** Sessions' costs by session id; a session not in it has no model call. */
export type SessionCostMap = ReadonlyMap<string, SessionCost>;

/** A session without model calls: nothing reported, nothing estimated. */
export const NO_COST: SessionCost = { estimatedCostUsd: 0, costSource: "none" };

/**
 * A session's cost source: `estimated` once any call of it was estimated
 * (its cost is then partly or wholly an estimate), else `reported` when any
 * call reported a cost, else `none`.
 */
function sessionCostSource(reportedCalls: number, estimatedCalls: number): CostSource {
  if (estimatedCalls > 0) return "estimated";
  return reportedCalls > 0 ? "reported" : "none";
}

/** A model call's cost source, from its stored cost and estimate. */
export function callCostSource(costUsd: unknown, estimatedCostUsd: unknown): CostSource {
  if (costUsd !== null && costUsd !== undefined) return "reported";
  return estimatedCostUsd !== null && estimatedCostUsd !== undefined ? "estimated" : "none";
}

/** The costs of sessions' rows, from the counts and estimate each row keeps (schema 14). */
export function sessionCostsOf(rows: readonly Record<string, unknown>[]): SessionCostMap {
  const costs = new Map<string, SessionCost>();
  for (const row of rows) {
    costs.set(String(row.session_id), {
      estimatedCostUsd: Number(row.estimated_cost_usd ?? 0),
      costSource: sessionCostSource(
        Number(row.reported_cost_calls),
        Number(row.estimated_cost_calls),
      ),
    });
  }
  return costs;
}

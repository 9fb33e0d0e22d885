/**
 * The `risk_flags` and `domain_hits` rows of a call's detection, as ingest
 * and `detect rescan` store them.
 *
 * @module
 */
import type { Detection } from "../detect/mod.ts";
import type { DomainHitRow, RiskFlagRow } from "./table_columns.ts";

/** The identity of a stored call that its flags and domain hits repeat. */
export interface StoredCall {
  id: string;
  orgId: string;
  sessionId: string;
  timeMs: number;
  toolName: string;
  /** The agent's call id, else the row id. */
  toolCallId: string;
}

/** The `risk_flags` rows of a call's detection. */
export function riskFlagRows(
  call: StoredCall,
  detection: Detection,
  seq: number,
): RiskFlagRow[] {
  return detection.flags.map((finding) => ({
    call_id: call.id,
    flag: finding.flag,
    org_id: call.orgId,
    seq,
    session_id: call.sessionId,
    ts: call.timeMs,
    tool_call_id: call.toolCallId,
    tool_name: call.toolName,
    evidence: finding.evidence,
  }));
}

/** The `domain_hits` rows of a call's detection. */
export function domainHitRows(
  call: StoredCall,
  detection: Detection,
  seq: number,
): DomainHitRow[] {
  return detection.domains.map((hit) => ({
    call_id: call.id,
    domain: hit.domain,
    scheme: hit.scheme,
    org_id: call.orgId,
    seq,
    session_id: call.sessionId,
    ts: call.timeMs,
  }));
}

// Session detail: what one agent run did, as a timeline of its tool calls (outcome colours,
// durations to scale), its model calls and cost, the risk flags on the calls that raised them,
// and domains.
import { api } from "./api.js";
import {
  costText,
  count,
  countColumn,
  decisionText,
  duration,
  estimated,
  h,
  outcomeBadge,
  panel,
  route,
  table,
  usd,
  when,
} from "./dom.js";

/**
 * Which call raised each flag. A flag names the agent's own call id, which the session's call
 * list does not carry, so a flag is matched to the call with its timestamp and tool.
 */
export function flagsByCall(toolCalls, flags) {
  const byCall = new Map();
  for (const flag of flags) {
    const call = toolCalls.find((c) =>
      c.timestamp === flag.timestamp && c.tool_name === flag.tool_name
    );
    if (!call) continue;
    byCall.set(call.id, [...(byCall.get(call.id) ?? []), flag]);
  }
  return byCall;
}

export async function sessionView({ id }) {
  const detail = await api(`/v1/sessions/${encodeURIComponent(id)}`);
  const s = detail.session;
  const calls = detail.tool_calls;
  const flagged = flagsByCall(calls, detail.risk_flags);

  const facts = h(
    "dl",
    { class: "fields" },
    fact("Actor", `${s.actor_name || "(unnamed)"} · ${s.actor_id}`),
    fact("Agent", `${s.agent_system}${s.agent_version ? ` ${s.agent_version}` : ""}`),
    fact("Model", s.model || "not reported on tool calls"),
    fact("First seen", when(s.first_seen)),
    fact("Last seen", when(s.last_seen)),
    fact("Span", duration(s.total_duration_ms)),
    fact(
      "Tool calls",
      `${count(s.tool_call_count)} (${count(s.success_count)} ok, ${count(s.error_count)} ${
        s.error_count === 1 ? "error" : "errors"
      }, ${count(s.tool_call_count - s.success_count - s.error_count)} denied)`,
    ),
    fact("Model cost", costText(s.cost_usd, s.estimated_cost_usd, "none reported")),
  );

  return h(
    "div",
    {},
    h("p", { class: "note" }, h("a", { href: route("sessions") }, "Sessions"), " / session"),
    h("h1", {}, "Session ", h("span", { class: "mono" }, s.session_id)),
    h(
      "div",
      { class: "grid" },
      panel("Summary", facts),
      flagsPanel(detail.risk_flags, flagged),
    ),
    h(
      "div",
      { class: "grid" },
      panel(
        "Timeline",
        timeline(calls, flagged),
        calls.length < s.tool_call_count
          ? h(
            "p",
            { class: "note" },
            `The first ${count(calls.length)} of ${count(s.tool_call_count)} calls. `,
            h(
              "a",
              { href: route("tool-calls", { session_id: s.session_id }) },
              "Every call of this session",
            ),
          )
          : null,
      ),
    ),
    h("div", { class: "grid" }, modelPanel(s, detail.model_calls)),
    h("div", { class: "grid" }, domainsPanel(detail.external_domains)),
  );
}

function fact(label, value) {
  return [h("dt", {}, label), h("dd", {}, value)];
}

function flagsPanel(flags, flagged) {
  const callOf = new Map();
  for (const [callId, list] of flagged) for (const flag of list) callOf.set(flag, callId);
  return panel(
    "Risk flags",
    flags.length === 0 ? h("p", { class: "muted" }, "No risk flags in this session.") : table(
      "Risk flags raised",
      [
        { label: "Time", cell: (f) => when(f.timestamp) },
        {
          label: "Kind",
          cell: (f) => h("span", { class: "badge flag" }, f.flag),
        },
        { label: "Evidence", cell: (f) => h("code", {}, f.evidence) },
        {
          label: "Call",
          cell: (f) =>
            callOf.has(f)
              ? h(
                "a",
                { href: route(`tool-call/${encodeURIComponent(callOf.get(f))}`) },
                f.tool_name,
              )
              : h("code", {}, f.tool_name),
        },
      ],
      flags,
      { hideCaption: true },
    ),
  );
}

/** A strip of the whole session to scale, then one row per call with its duration to scale. */
function timeline(calls, flagged) {
  if (calls.length === 0) return h("p", { class: "muted" }, "No tool calls.");
  const start = Date.parse(calls[0].timestamp);
  const end = Math.max(...calls.map((c) => Date.parse(c.timestamp) + (c.duration_ms ?? 0)));
  const span = Math.max(1, end - start);
  const strip = h("div", {
    class: "strip",
    role: "img",
    "aria-label": `${calls.length} calls over ${
      duration(span)
    }; colours: green ok, red error, amber denied; outlined calls raised a risk flag`,
  });
  for (const c of calls) {
    const bar = h("span", { class: `fill-${c.outcome}${flagged.has(c.id) ? " flagged" : ""}` });
    bar.style.left = `${((Date.parse(c.timestamp) - start) / span) * 100}%`;
    bar.style.width = `${((c.duration_ms ?? 0) / span) * 100}%`;
    strip.append(bar);
  }
  const longest = Math.max(1, ...calls.map((c) => c.duration_ms ?? 0));
  const legend = h(
    "div",
    { class: "legend", "aria-hidden": "true" },
    ["ok", "error", "rejected"].map((o) =>
      h("span", {}, h("span", { class: `swatch fill-${o}` }), o === "rejected" ? "denied" : o)
    ),
    h("span", { class: "flag" }, "⚑ risk flag"),
  );
  const rows = table(
    `Tool calls of the session, oldest first (bars: duration, longest ${duration(longest)})`,
    [
      { label: "Time", cell: (c) => new Date(c.timestamp).toLocaleTimeString() },
      {
        label: "Tool",
        cell: (c) =>
          h(
            "a",
            { href: route(`tool-call/${encodeURIComponent(c.id)}`) },
            h("code", {}, c.tool_name),
          ),
      },
      { label: "Outcome", cell: (c) => outcomeBadge(c.outcome) },
      {
        label: "Duration",
        cell: (c) => {
          const bar = h("span", { class: `fill-${c.outcome}` });
          bar.style.width = `${((c.duration_ms ?? 0) / longest) * 100}%`;
          return h(
            "div",
            { class: "row" },
            h("div", { class: "dur", "aria-hidden": "true" }, bar),
            duration(c.duration_ms),
          );
        },
      },
      {
        label: "Flags, error or decision",
        cell: (c) => [
          ...(flagged.get(c.id) ?? []).map((f) =>
            h("span", { class: "badge flag", "data-flag": f.flag }, `⚑ ${f.flag}: ${f.evidence}`)
          ),
          c.error_message
            ? h("span", { class: "outcome-error" }, ` ${c.error_message.slice(0, 140)}`)
            : null,
          c.decision ? h("span", { class: "muted" }, ` ${decisionText(c)}`) : null,
        ],
      },
    ],
    calls,
    { rowClass: (c) => flagged.has(c.id) ? "flagged" : null },
  );
  return [strip, legend, rows];
}

function domainsPanel(domains) {
  return panel(
    "External domains",
    domains.length === 0 ? h("p", { class: "muted" }, "No external domains reached.") : table(
      "External domains reached",
      [
        {
          label: "Domain",
          cell: (d) => h("a", { href: route("sessions", { domain: d.domain }) }, d.domain),
        },
        { label: "Scheme", cell: (d) => d.scheme },
        countColumn("Hits", "hits"),
      ],
      domains,
      { hideCaption: true },
    ),
  );
}

/** The session's model calls, oldest first, with their tokens by kind, cost and duration. */
function modelPanel(s, calls) {
  const cost = h(
    "p",
    {},
    s.cost_usd > 0
      ? `${usd(s.cost_usd)} of model cost reported for this session.`
      : "This agent reported no cost for the session.",
    s.estimated_cost_usd > 0
      ? ` ${
        estimated(s.estimated_cost_usd)
      } for its calls without a reported cost, from the price table.`
      : "",
  );
  if (calls.length === 0) {
    return panel("Model calls", cost, h("p", { class: "muted" }, "No model calls reported."));
  }
  const sum = (field) => calls.reduce((total, c) => total + c[field], 0);
  return panel(
    "Model calls",
    cost,
    table(
      `${count(calls.length)} model ${calls.length === 1 ? "call" : "calls"}, oldest first: ${
        count(sum("input_tokens"))
      } input and ${count(sum("output_tokens"))} output tokens`,
      [
        { label: "Time", cell: (c) => new Date(c.timestamp).toLocaleTimeString() },
        {
          label: "Model",
          cell: (c) => [
            h("code", {}, c.model || "not reported"),
            c.provider_name ? h("span", { class: "muted" }, ` ${c.provider_name}`) : null,
          ],
        },
        countColumn("Input", "input_tokens"),
        countColumn("Output", "output_tokens"),
        countColumn("Cache read", "cache_read_tokens"),
        countColumn("Cache write", "cache_creation_tokens"),
        {
          label: "Cost",
          num: true,
          cell: (c) =>
            c.cost_source === "reported"
              ? usd(c.cost_usd)
              : c.cost_source === "estimated"
              ? h("span", { "data-cost": "estimated" }, estimated(c.estimated_cost_usd))
              : h("span", { class: "muted" }, "not reported"),
        },
        { label: "Duration", num: true, cell: (c) => duration(c.duration_ms) },
      ],
      calls,
      { rowClass: () => "model-call" },
    ),
    calls.length === 5000
      ? h("p", { class: "note" }, "The first 5,000 model calls of the session.")
      : null,
  );
}

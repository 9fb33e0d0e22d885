// Tool call detail: every field the API serves, arguments and result pretty-printed, with the
// redaction and truncation markers the server wrote made visible.
import { api } from "./api.js";
import { count, duration, h, outcomeBadge, panel, route, when } from "./dom.js";

const MARKERS = /(\[REDACTED:[A-Za-z0-9_.-]+\]|…\[truncated: \d+ bytes\])/g;

/** Text with `[REDACTED:<kind>]` and truncation markers wrapped in `<mark>`. */
export function marked(text) {
  return text.split(MARKERS).map((part, i) => {
    if (i % 2 === 0) return part;
    return part.startsWith("[REDACTED:")
      ? h("mark", {
        class: "redacted",
        title: "Replaced by the server: a secret was detected here",
      }, part)
      : h("mark", { class: "truncated", title: "Cut by the server's size limit" }, part);
  });
}

/** Arguments are a JSON-encoded string (spec 2.5): parsed and indented when they parse. */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export async function toolCallView({ id }) {
  const c = await api(`/v1/tool-calls/${encodeURIComponent(id)}`);
  const fields = [
    ["Time", when(c.timestamp)],
    ["Outcome", outcomeBadge(c.outcome)],
    ["Duration", duration(c.duration_ms)],
    ["Result size", c.result_size_bytes === null ? "—" : `${count(c.result_size_bytes)} bytes`],
    ["Tool", h("code", {}, c.tool_name)],
    ["Tool type", c.tool_type],
    ["Category", c.category],
    [
      "Session",
      h(
        "a",
        { href: route(`session/${encodeURIComponent(c.session_id)}`), class: "mono" },
        c.session_id,
      ),
    ],
    ["Actor", `${c.actor_name || "(unnamed)"} · ${c.actor_id}`],
    [
      "Agent",
      `${c.agent_system}${c.agent_version ? ` ${c.agent_version}` : ""}${
        c.agent_name ? ` (${c.agent_name})` : ""
      }`,
    ],
    ["Model", c.model],
    ["Provider", c.provider_name],
    [
      "MCP server",
      c.mcp_server_name
        ? `${c.mcp_server_name}${c.mcp_server_scope ? ` (${c.mcp_server_scope})` : ""}`
        : null,
    ],
    ["Tool description", c.tool_description ? marked(c.tool_description) : null],
    ["Working directory", c.cwd ? h("code", {}, marked(c.cwd)) : null],
    ["Machine", [c.os_type, c.host_arch, c.terminal_type].filter(Boolean).join(" · ") || null],
    ["Prompt id", c.prompt_id],
    ["Agent's call id", c.tool_call_id ?? c.tool_use_id],
    ["Source", c.source],
    ["Trace", c.trace_id ? `${c.trace_id} / ${c.span_id ?? ""}` : null],
    ["Id", h("code", {}, c.id)],
  ].filter(([, v]) => v !== null && v !== undefined && v !== "");

  const decisionRows = [
    ["Decision", c.decision ?? "not reported"],
    ["Decided by", c.decision_source ?? "—"],
    ["Error type", c.error_type ? marked(c.error_type) : "—"],
    [
      "Error message",
      c.error_message ? h("span", { class: "outcome-error" }, marked(c.error_message)) : "—",
    ],
  ];
  const decision = h(
    "dl",
    { class: "fields" },
    decisionRows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );

  return h(
    "div",
    {},
    h(
      "p",
      { class: "note" },
      h("a", { href: route("tool-calls") }, "Tool calls"),
      " / ",
      h("a", { href: route(`session/${encodeURIComponent(c.session_id)}`) }, "its session"),
    ),
    h("h1", {}, "Tool call ", h("code", {}, c.tool_name), " ", outcomeBadge(c.outcome)),
    h(
      "div",
      { class: "grid" },
      panel(
        "Call",
        h("dl", { class: "fields" }, fields.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      ),
      panel("Decision and error", decision),
    ),
    h(
      "div",
      { class: "grid" },
      panel(
        "Arguments",
        c.arguments === undefined
          ? h(
            "p",
            { class: "muted" },
            "Not sent: the agent is not configured to send tool arguments.",
          )
          : h("pre", { tabindex: "0", "aria-label": "Arguments" }, marked(pretty(c.arguments))),
      ),
      panel(
        "Result",
        c.result === undefined
          ? h("p", { class: "muted" }, "Not sent by the agent.")
          : h("pre", { tabindex: "0", "aria-label": "Result" }, marked(pretty(c.result))),
      ),
    ),
  );
}

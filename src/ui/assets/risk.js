// Risk: flags by kind over a window, and a drill-down to the calls that raised one kind. The API
// serves individual flags inside session details only, so the drill-down reads the window's
// sessions newest first, a batch at a time.
import { api, apiEach, refusedKey } from "./api.js";
import { timeChart } from "./charts.js";
import { dimensionFilters, dimensionSelects, loadDimensions } from "./dimensions.js";
import {
  count,
  countColumn,
  errorBox,
  filtersForm,
  h,
  panel,
  route,
  select,
  table,
  tableRow,
  when,
} from "./dom.js";
import { overviewState } from "./overview.js";
import { flagsByCall } from "./session.js";

const SESSIONS_PER_SCAN = 40;

export async function riskView({ params }) {
  const state = overviewState(params);
  const flag = params.get("flag") ?? "";
  const [risk, dimensions] = await Promise.all([
    api("/v1/insights/risk", {
      window: state.window,
      granularity: state.granularity,
      ...state.dims,
    }),
    loadDimensions(),
  ]);
  const kinds = [...new Set(risk.breakdown.map((r) => r.flag))];
  const buckets = [...new Set(risk.series.map((p) => p.bucket))].sort();
  const series = kinds.map((kind, i) => ({
    label: kind,
    values: buckets.map((b) =>
      risk.series.find((p) => p.bucket === b && p.flag === kind)?.flags ?? 0
    ),
    colour: ["--flag", "--accent", "--error"][i % 3],
  }));
  const link = (kind) =>
    route("risk", {
      window: state.window,
      granularity: state.granularity,
      ...state.dims,
      flag: kind,
    });

  const form = filtersForm(
    "Risk filters",
    "risk",
    (data) => {
      const window = data.get("window");
      return {
        window,
        granularity: window === "7d" ? "daily" : data.get("granularity"),
        ...dimensionFilters(data),
        flag: data.get("flag"),
      };
    },
    select("Window", "window", [["7d", "Last 7 days"], ["30d", "Last 30 days"], [
      "90d",
      "Last 90 days",
    ]], state.window),
    select(
      "Granularity",
      "granularity",
      [["daily", "Daily"], ["weekly", "Weekly (30d, 90d)"]],
      state.granularity,
    ),
    select("Flag kind", "flag", [
      ["", "all kinds"],
      ...kinds.map((k) => [k, k]),
      ...(flag && !kinds.includes(flag) ? [[flag, flag]] : []),
    ], flag),
    dimensionSelects(dimensions, state.dims),
    h("button", { type: "submit" }, "Apply"),
  );

  const page = h(
    "div",
    {},
    h("h1", {}, "Risk"),
    h("section", { class: "panel" }, form),
    h(
      "ul",
      { class: "kpis", "aria-label": "Risk figures" },
      h(
        "li",
        { class: "kpi" },
        h("span", { class: "label" }, "Flags raised"),
        h("span", { class: "value", "data-kpi": "total_flags" }, count(risk.summary.total_flags)),
      ),
      h(
        "li",
        { class: "kpi" },
        h("span", { class: "label" }, "Sessions flagged"),
        h("span", { class: "value" }, count(risk.summary.sessions_flagged)),
      ),
      h(
        "li",
        { class: "kpi" },
        h("span", { class: "label" }, "Kinds"),
        h("span", { class: "value" }, count(risk.summary.distinct_flag_kinds)),
      ),
    ),
    h(
      "div",
      { class: "grid" },
      panel(
        "Flags by kind",
        risk.breakdown.length === 0
          ? h("p", { class: "muted" }, "No risk flags in this window.")
          : table(
            "Risk flags by kind",
            [
              {
                label: "Kind",
                cell: (r) =>
                  h(
                    "a",
                    { href: link(r.flag), "aria-current": r.flag === flag ? "true" : null },
                    r.flag,
                  ),
              },
              countColumn("Flags", "flags"),
              countColumn("Sessions", "sessions"),
              countColumn("Tools", "tools"),
            ],
            risk.breakdown,
            { hideCaption: true },
          ),
      ),
      panel(
        "Flags over time",
        timeChart({
          title: `Risk flags per ${state.granularity === "daily" ? "day" : "week"} by kind`,
          summary: `${count(risk.summary.total_flags)} flags in ${state.window}`,
          buckets,
          series,
          bars: false,
        }),
      ),
    ),
  );
  page.append(h("div", { class: "grid" }, drillDown(flag, risk.window, state.dims)));
  return page;
}

/**
 * The calls that raised `flag` (every kind when empty), found session by session among the
 * sessions with the dimension filters `dims`.
 */
function drillDown(flag, window, dims) {
  const columns = [
    { label: "Time", cell: (r) => when(r.flag.timestamp) },
    { label: "Kind", cell: (r) => h("span", { class: "badge flag" }, r.flag.flag) },
    { label: "Evidence", cell: (r) => h("code", {}, r.flag.evidence) },
    {
      label: "Call",
      cell: (r) =>
        r.callId
          ? h("a", { href: route(`tool-call/${encodeURIComponent(r.callId)}`) }, r.flag.tool_name)
          : h("code", {}, r.flag.tool_name),
    },
    { label: "Actor", cell: (r) => r.session.actor_name || r.session.actor_id },
    {
      label: "Session",
      cell: (r) =>
        h("a", {
          href: route(`session/${encodeURIComponent(r.session.session_id)}`),
          class: "mono",
        }, `${r.session.session_id.slice(0, 13)}…`),
    },
  ];
  const body = h("tbody");
  const tableNode = h(
    "div",
    { class: "scroll" },
    h(
      "table",
      {},
      h("caption", { class: "sr" }, "Flagged calls"),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c.label)))),
      body,
    ),
  );
  const status = h("p", { class: "note", "aria-live": "polite" });
  const more = h(
    "button",
    { type: "button", class: "quiet", id: "scan-more" },
    "Scan more sessions",
  );
  const error = h("div");
  let cursor;
  let scanned = 0;
  let found = 0;
  let done = false;
  const scan = async () => {
    more.disabled = true;
    try {
      const page = await api("/v1/sessions", {
        after: window.start,
        before: window.end,
        ...dims,
        limit: SESSIONS_PER_SCAN,
        cursor,
      });
      const details = await apiEach(
        page.data,
        (s) => `/v1/sessions/${encodeURIComponent(s.session_id)}`,
      );
      for (const detail of details) {
        const calls = flagsByCall(detail.tool_calls, detail.risk_flags);
        const callOf = new Map();
        for (const [callId, list] of calls) for (const f of list) callOf.set(f, callId);
        for (const f of detail.risk_flags) {
          if (flag && f.flag !== flag) continue;
          body.append(
            tableRow(columns, { flag: f, callId: callOf.get(f), session: detail.session }),
          );
          found++;
        }
      }
      scanned += page.data.length;
      cursor = page.next_cursor;
      done = !cursor;
    } catch (e) {
      refusedKey(e);
      error.replaceChildren(errorBox(e));
    } finally {
      more.disabled = false;
      more.hidden = done;
      status.textContent = `${count(found)} ${flag || "flagged"} calls in the ${
        count(scanned)
      } most recent sessions of the window${done ? " (all sessions read)" : ""}`;
    }
  };
  more.addEventListener("click", scan);
  scan();
  return panel(
    flag ? `Calls flagged ${flag}` : "Flagged calls",
    status,
    tableNode,
    h("div", { class: "more" }, more, error),
  );
}

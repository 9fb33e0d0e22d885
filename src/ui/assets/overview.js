// Overview: the organization at a glance over a window. Every number links to the list behind it.
import { api, refusedKey } from "./api.js";
import { timeChart } from "./charts.js";
import {
  dimensionFilters,
  dimensionSelects,
  groupByLabel,
  groupByOptions,
  loadDimensions,
} from "./dimensions.js";
import {
  costColumn,
  costText,
  count,
  countColumn,
  decimal,
  duration,
  errorBox,
  estimated,
  filtersForm,
  h,
  input,
  panel,
  route,
  select,
  table,
  usd,
} from "./dom.js";

const WINDOWS = ["7d", "30d", "90d"];

/**
 * Window, granularity, actor, team, dimension filters (`dims`: `{ "dim.<key>": value }`) and
 * group-by from the URL; window and granularity checked against what the API accepts, the rest
 * left for the API to judge.
 */
export function overviewState(params) {
  const window = WINDOWS.includes(params.get("window")) ? params.get("window") : "7d";
  let granularity = params.get("granularity") === "weekly" ? "weekly" : "daily";
  if (window === "7d") granularity = "daily";
  return {
    window,
    granularity,
    actor: params.get("actor") ?? "",
    team: params.getAll("team").join(","),
    dims: dimensionFilters(params),
    groupBy: params.get("group_by") ?? "",
  };
}

/** The filters every list link carries: the window's time range, actor, team and dimensions. */
function listFilters(state, range) {
  return {
    after: range.start,
    before: range.end,
    actor: state.actor,
    team: state.team,
    ...state.dims,
  };
}

/** Per insight, the summary figures its panel's table of groups shows, one column each. */
const GROUP_FIGURES = {
  activity: [
    ["Calls", (s) => count(s.total_calls)],
    ["Errors", (s) => count(s.error_count)],
    ["Sessions", (s) => count(s.session_count)],
  ],
  "top-tools": [
    ["Calls", (s) => count(s.total_calls)],
    ["Distinct tools", (s) => count(s.unique_tools)],
  ],
  cost: [
    ["Model calls", (s) => count(s.call_count)],
    ["Input tokens", (s) => count(s.input_tokens)],
    ["Output tokens", (s) => count(s.output_tokens)],
    ["Cost", (s) => costText(s.cost_usd, s.estimated_cost_usd)],
  ],
  outliers: [
    ["Sessions", (s) => count(s.session_count)],
    ["95th percentile (calls)", (s) => decimal(s.p95_call_count)],
    ["Outliers", (s) => count(s.outlier_count)],
  ],
  risk: [
    ["Flags", (s) => count(s.total_flags)],
    ["Sessions flagged", (s) => count(s.sessions_flagged)],
  ],
  domains: [
    ["References", (s) => count(s.total_hits)],
    ["Domains", (s) => count(s.unique_domains)],
    ["Sessions", (s) => count(s.sessions)],
  ],
  productivity: [
    ["Active sessions", (s) => count(s.sessions)],
    ["Lines added / removed", (s) => `${count(s.lines_added)} / ${count(s.lines_removed)}`],
    ["Commits", (s) => count(s.commits)],
  ],
};

/** The parameters of an insight request: window, granularity, dimensions and group-by. */
function insightQuery(state) {
  return {
    window: state.window,
    granularity: state.granularity,
    ...state.dims,
    group_by: state.groupBy,
  };
}

/** What the figures cover, in words. */
function coverage(state) {
  const dims = Object.entries(state.dims).map(([name, value]) =>
    `${name.slice("dim.".length)} = ${value}`
  );
  return dims.length === 0
    ? "Figures and charts cover the whole organization; actor and team narrow the lists they link to."
    : `Figures, charts and the lists they link to cover the sessions with ${
      dims.join(" and ")
    }; actor and team narrow the lists.`;
}

/** Renders the overview; the activity answer comes first so the headline figures paint early. */
export async function overviewView({ params }) {
  const state = overviewState(params);
  const load = (name) => api(`/v1/insights/${name}`, insightQuery(state));
  const dimensionsLoad = loadDimensions();
  dimensionsLoad.catch(() => {});
  // The headline figures first: the other insights queue behind it on the server.
  const activity = await load("activity");
  const pending = {
    topTools: load("top-tools"),
    cost: load("cost"),
    risk: load("risk"),
    domains: load("domains"),
    outliers: load("outliers"),
    productivity: api("/v1/insights/productivity", {
      ...insightQuery(state),
      actor: state.actor,
      team: state.team.split(","),
    }),
  };
  for (const p of Object.values(pending)) p.catch(() => {});
  const dimensions = await dimensionsLoad;
  const range = activity.window;
  const filters = listFilters(state, range);

  const kpis = h("ul", { class: "kpis", "aria-label": "Headline figures" });
  const kpi = (label, value, href, id) =>
    h(
      "li",
      { class: "kpi" },
      h("span", { class: "label", id: `${id}-label` }, label),
      href
        ? h("a", { class: "value", href, "data-kpi": id, "aria-describedby": `${id}-label` }, value)
        : h("span", { class: "value", "data-kpi": id }, value),
    );
  kpis.append(
    kpi("Tool calls", count(activity.summary.total_calls), route("tool-calls", filters), "calls"),
    kpi(
      "Errors",
      count(activity.summary.error_count),
      route("tool-calls", { ...filters, outcome: "error" }),
      "errors",
    ),
    // Sessions with a tool call in the window (activity's count), not productivity's.
    kpi(
      "Sessions with tool calls",
      count(activity.summary.session_count),
      route("sessions", filters),
      "sessions",
    ),
  );

  const page = h(
    "div",
    {},
    h("h1", {}, "Overview"),
    controls(state, dimensions),
    h(
      "p",
      { class: "note", id: "coverage" },
      `${new Date(range.start).toLocaleString()} – ${new Date(range.end).toLocaleString()}. `,
      coverage(state),
    ),
    kpis,
  );
  const grid = h("div", { class: "grid" });
  page.append(grid);

  const activityPanel = panel(
    "Activity",
    timeChart({
      title: `Tool calls and errors per ${state.granularity === "daily" ? "day" : "week"}`,
      summary: `${count(activity.summary.total_calls)} calls, ${
        count(activity.summary.error_count)
      } errors in ${state.window}`,
      buckets: activity.series.map((p) => p.bucket),
      series: [
        { label: "Calls", values: activity.series.map((p) => p.calls), colour: "--accent" },
        { label: "Errors", values: activity.series.map((p) => p.errors), colour: "--error" },
      ],
      bars: true,
      height: 300,
    }),
    groupsTable("activity", activity, state, filters),
  );
  activityPanel.classList.add("wide");
  grid.append(activityPanel);

  const slots = {
    topTools: placeholder(grid, "Top tools"),
    cost: placeholder(grid, "Cost by provider and model", "wide"),
    risk: placeholder(grid, "Risk flags by kind"),
    domains: placeholder(grid, "External domains"),
    outliers: placeholder(grid, "Outlier sessions"),
    productivity: placeholder(grid, "Productivity"),
  };
  slots.productivity.dataset.panel = "productivity";

  const fill = async (name, build) => {
    try {
      const body = await pending[name];
      const node = build(body);
      for (const c of slots[name].classList) node.classList.add(c);
      slots[name].replaceWith(node);
    } catch (error) {
      if (!refusedKey(error)) slots[name].append(errorBox(error));
    }
  };
  const groups = (name) => (body) => groupsTable(name, body, state, filters);
  fill("topTools", (body) => topToolsPanel(body, filters, groups("top-tools")(body)));
  fill("cost", (body) => costPanel(body, kpis, groups("cost")(body)));
  fill("risk", (body) => riskPanel(body, state, kpis, groups("risk")(body)));
  fill("domains", (body) => domainsPanel(body, filters, kpis, groups("domains")(body)));
  fill("outliers", (body) => outliersPanel(body, groups("outliers")(body)));
  fill("productivity", (body) => productivityPanel(body, groups("productivity")(body)));
  return page;
}

function placeholder(grid, title, className) {
  const node = panel(title, h("p", { class: "muted" }, "Loading…"));
  if (className) node.classList.add(className);
  grid.append(node);
  return node;
}

/**
 * The table of an insight's groups when the overview is grouped: one row per group (its value or
 * actor name, "(none)" for sessions without the dimension) with the group's summary figures.
 */
function groupsTable(name, body, state, filters) {
  if (!state.groupBy || !Array.isArray(body.groups)) return null;
  const by = groupByLabel(state.groupBy);
  const linkOf = (value) =>
    state.groupBy === "actor"
      ? route("sessions", { ...filters, actor: value })
      : state.groupBy === "agent"
      ? route("sessions", { ...filters, agent: value })
      : route("sessions", { ...filters, [state.groupBy]: value });
  const groupCell = (g) =>
    g.value === null ? h("span", { class: "muted", "data-group": "" }, "(none)") : h(
      "a",
      { href: linkOf(g.value), "data-group": g.value, title: g.label ? g.value : null },
      g.label || g.value,
    );
  return h(
    "div",
    { class: "groups", "data-groups": name },
    h("h3", {}, `By ${by}`),
    body.groups.length === 0
      ? h("p", { class: "muted" }, "Nothing to group in this window.")
      : table(
        `${name} by ${by}`,
        [
          { label: by, cell: groupCell },
          ...GROUP_FIGURES[name].map(([label, figure]) => ({
            label,
            num: true,
            cell: (g) => figure(g.summary),
          })),
        ],
        body.groups,
        { hideCaption: true },
      ),
    body.groups_truncated
      ? h("p", { class: "note" }, `The ${count(body.groups.length)} largest groups only.`)
      : null,
  );
}

function controls(state, dimensions) {
  const form = filtersForm(
    "Overview filters",
    "overview",
    (data) => ({
      window: data.get("window"),
      granularity: data.get("granularity"),
      actor: String(data.get("actor") ?? "").trim(),
      team: String(data.get("team") ?? "").split(",").map((t) => t.trim()).filter(Boolean),
      ...dimensionFilters(data),
      group_by: data.get("group_by"),
    }),
    select(
      "Window",
      "window",
      [["7d", "Last 7 days"], ["30d", "Last 30 days"], ["90d", "Last 90 days"]],
      state.window,
      {
        onchange: (event) => {
          const weekly = form.querySelector("option[value=weekly]");
          weekly.disabled = event.target.value === "7d";
          if (weekly.disabled) form.elements.granularity.value = "daily";
        },
      },
    ),
    select(
      "Granularity",
      "granularity",
      [["daily", "Daily"], ["weekly", "Weekly"]],
      state.granularity,
    ),
    input("Actor id", "actor", state.actor, { placeholder: "act_…", size: 22 }),
    input("Team (actor ids, comma-separated)", "team", state.team, {
      placeholder: "act_…, act_…",
      size: 30,
    }),
    dimensionSelects(dimensions, state.dims),
    select("Group by", "group_by", groupByOptions(dimensions, state.groupBy), state.groupBy),
    h("button", { type: "submit" }, "Apply"),
  );
  form.querySelector("option[value=weekly]").disabled = state.window === "7d";
  return form;
}

function topToolsPanel(body, filters, groups) {
  const rows = body.breakdown.slice(0, 10);
  const callsOf = (r, outcome) =>
    route("tool-calls", { ...filters, tool_name: r.tool_name, tool_type: r.tool_type, outcome });
  return panel(
    "Top tools",
    h(
      "p",
      { class: "note" },
      `${count(body.summary.unique_tools)} distinct tools, ${
        count(body.summary.total_calls)
      } calls`,
    ),
    table(
      "Most-used tools",
      [
        {
          label: "Tool",
          cell: (
            r,
          ) => [h("code", {}, r.tool_name), r.tool_type === "builtin" ? "" : ` (${r.tool_type})`],
        },
        {
          label: "Calls",
          num: true,
          cell: (r) => h("a", { href: callsOf(r) }, count(r.calls)),
        },
        {
          label: "Errors",
          num: true,
          cell: (r) => h("a", { href: callsOf(r, "error") }, count(r.errors)),
        },
        { label: "Avg duration", num: true, cell: (r) => duration(r.avg_duration_ms) },
      ],
      rows,
      { hideCaption: true },
    ),
    groups,
  );
}

function costPanel(body, kpis, groups) {
  const s = body.summary;
  kpis.append(
    h(
      "li",
      { class: "kpi" },
      h("span", { class: "label" }, "Model cost"),
      h(
        "span",
        { class: "value", "data-kpi": "cost" },
        s.cost_available || s.estimated_cost_usd > 0
          ? costText(s.cost_available ? s.cost_usd : 0, s.estimated_cost_usd, usd(0))
          : "not reported",
      ),
    ),
  );
  return panel(
    "Cost by provider and model",
    h(
      "p",
      { class: "note" },
      `${count(s.call_count)} model calls · ${count(s.input_tokens)} input, ${
        count(s.output_tokens)
      } output, ${count(s.cache_read_tokens)} cache-read tokens`,
      s.cost_available
        ? ` · ${usd(s.cost_usd)} reported`
        : " · these agents reported no cost (tokens only)",
      s.estimated_cost_usd > 0
        ? ` · ${estimated(s.estimated_cost_usd)} for calls without a reported cost (price table)`
        : "",
    ),
    table(
      "Model cost by provider and model",
      [
        {
          label: "Provider",
          cell: (r) => r.provider_name || h("span", { class: "muted" }, "not reported"),
        },
        { label: "Model", cell: (r) => h("code", {}, r.model) },
        countColumn("Calls", "call_count"),
        countColumn("Input tokens", "input_tokens"),
        countColumn("Output tokens", "output_tokens"),
        costColumn(),
      ],
      body.breakdown.slice(0, 12),
      { hideCaption: true },
    ),
    groups,
  );
}

function riskPanel(body, state, kpis, groups) {
  const riskRoute = (flag) =>
    route("risk", { window: state.window, granularity: state.granularity, ...state.dims, flag });
  kpis.append(
    h(
      "li",
      { class: "kpi" },
      h("span", { class: "label", id: "flags-label" }, "Risk flags"),
      h("a", {
        class: "value",
        href: riskRoute(),
        "data-kpi": "flags",
        "aria-describedby": "flags-label",
      }, count(body.summary.total_flags)),
    ),
  );
  return panel(
    "Risk flags by kind",
    h("p", { class: "note" }, `${count(body.summary.sessions_flagged)} sessions flagged`),
    body.breakdown.length === 0
      ? h("p", { class: "muted" }, "No risk flags in this window.")
      : table(
        "Risk flags by kind",
        [
          { label: "Kind", cell: (r) => h("a", { href: riskRoute(r.flag) }, r.flag) },
          {
            label: "Flags",
            num: true,
            cell: (r) => h("a", { href: riskRoute(r.flag) }, count(r.flags)),
          },
          countColumn("Sessions", "sessions"),
          countColumn("Tools", "tools"),
        ],
        body.breakdown,
        { hideCaption: true },
      ),
    groups,
  );
}

function domainsPanel(body, filters, kpis, groups) {
  kpis.append(
    h(
      "li",
      { class: "kpi" },
      h("span", { class: "label" }, "External domains"),
      h("span", { class: "value", "data-kpi": "domains" }, count(body.summary.unique_domains)),
    ),
  );
  return panel(
    "External domains",
    h(
      "p",
      { class: "note" },
      `${count(body.summary.total_hits)} references from ${count(body.summary.sessions)} sessions`,
    ),
    table(
      "External domains reached",
      [
        { label: "Domain", cell: (r) => h("code", {}, r.domain) },
        { label: "Scheme", cell: (r) => r.scheme },
        countColumn("Hits", "hits"),
        {
          label: "Sessions",
          num: true,
          cell: (r) =>
            h(
              "a",
              { href: route("sessions", { ...filters, domain: r.domain }) },
              count(r.sessions),
            ),
        },
      ],
      body.breakdown.slice(0, 12),
      { hideCaption: true },
    ),
    groups,
  );
}

function outliersPanel(body, groups) {
  const s = body.summary;
  return panel(
    "Outlier sessions",
    h(
      "p",
      { class: "note" },
      `${count(s.outlier_count)} of ${count(s.session_count)} sessions above the 95th percentile (${
        decimal(s.p95_call_count)
      } calls)`,
    ),
    table(
      "Sessions with unusually many calls",
      [
        {
          label: "Session",
          cell: (r) =>
            h(
              "a",
              { href: route(`session/${encodeURIComponent(r.session_id)}`), class: "mono" },
              r.session_id.slice(0, 13) + "…",
            ),
        },
        { label: "Agent", cell: (r) => h("span", { class: "nowrap" }, r.agent_system) },
        countColumn("Calls", "call_count"),
        countColumn("Errors", "error_count"),
        {
          label: "Last seen",
          cell: (r) =>
            h(
              "span",
              { class: "nowrap" },
              new Date(r.last_seen).toLocaleDateString(undefined, {
                month: "short",
                day: "numeric",
              }),
            ),
        },
      ],
      body.breakdown.slice(0, 10),
      { hideCaption: true },
    ),
    groups,
  );
}

/** Where lines came from, in words (the derived ones are estimates from tool arguments). */
const LINES_SOURCE = {
  "metrics": "as the agents reported them",
  "tool_calls": "derived from file-writing tool calls",
  "mixed": "partly derived from file-writing tool calls",
};

/** The productivity insight (an extension of the API): a few figures, narrowed by actor/team. */
function productivityPanel(body, groups) {
  const s = body.summary;
  const figure = (label, value, id) =>
    h(
      "li",
      { class: "kpi" },
      h("span", { class: "label" }, label),
      h("span", { class: "value", "data-productivity": id }, value),
    );
  const node = panel(
    "Productivity",
    h(
      "ul",
      { class: "kpis", "aria-label": "Productivity figures" },
      // Sessions with a tool call, a model call or a metric point in the window.
      figure("Active sessions (calls or metrics)", count(s.sessions), "sessions"),
      figure(
        "Lines added / removed",
        `${count(s.lines_added)} / ${count(s.lines_removed)}`,
        "lines",
      ),
      figure("Commits", count(s.commits), "commits"),
      figure(
        "Edits accepted",
        s.acceptance_rate === null ? "—" : `${decimal(s.acceptance_rate * 100)}%`,
        "acceptance",
      ),
      figure(
        "Cost per 1,000 lines",
        s.cost_per_1k_lines === null ? "—" : usd(s.cost_per_1k_lines),
        "cost-per-1k-lines",
      ),
    ),
    h(
      "p",
      { class: "note", "data-lines-source": s.lines_source ?? "none" },
      s.lines_source === null
        ? "No lines changed in this window."
        : `Lines ${LINES_SOURCE[s.lines_source]}.`,
      " Actor and team narrow these figures.",
    ),
    groups,
  );
  node.dataset.panel = "productivity";
  return node;
}

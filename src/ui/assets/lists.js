// Sessions and tool-call lists: every filter of the spec and the dimensions, pickers fed by the
// facets and GET /v1/dimensions, the filters in the URL (shareable, back button), and "Load more"
// on next_cursor.
import { api, refusedKey } from "./api.js";
import { dimensionFilters, dimensionSelects, loadDimensions } from "./dimensions.js";
import {
  costColumn,
  count,
  countColumn,
  decisionText,
  duration,
  errorBox,
  filtersForm,
  h,
  input,
  outcomeBadge,
  route,
  select,
  table,
  tableRow,
  when,
} from "./dom.js";

/** `datetime-local` value (local time) for an RFC 3339 timestamp, and back. */
function toLocalInput(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 19);
}
function fromLocalInput(value) {
  return value ? new Date(value).toISOString() : "";
}

/** A list view: filters form, table and "Load more". */
async function listView({ params }, spec) {
  const filters = {};
  for (const name of spec.filters) {
    filters[name] = name === "team" ? params.getAll("team").join(",") : params.get(name) ?? "";
  }
  const dims = dimensionFilters(params);
  const query = { ...filters, team: filters.team.split(",").filter(Boolean), ...dims, limit: 50 };
  const [facets, dimensions, first] = await Promise.all([
    api(spec.facetsPath),
    loadDimensions(),
    api(spec.path, query),
  ]);

  const form = filtersForm(
    `${spec.title} filters`,
    spec.view,
    (data) => {
      const next = {};
      for (const name of spec.filters) {
        const value = String(data.get(name) ?? "").trim();
        next[name] = name === "after" || name === "before"
          ? fromLocalInput(value)
          : name === "team"
          ? value.split(",").map((t) => t.trim()).filter(Boolean)
          : value;
      }
      return { ...next, ...dimensionFilters(data) };
    },
    spec.fields(filters, facets),
    dimensionSelects(dimensions, dims),
    knownActors(first.data),
    h("button", { type: "submit" }, "Apply"),
    h("a", { href: route(spec.view) }, "Clear"),
  );

  const status = h("p", { class: "note", "aria-live": "polite" });
  const tableNode = table(spec.title, spec.columns, first.data, {
    hideCaption: true,
    rowClass: spec.rowClass,
  });
  const body = tableNode.querySelector("tbody");
  let shown = first.data.length;
  let cursor = first.next_cursor;
  const more = h("button", { type: "button", class: "quiet", id: "load-more" }, "Load more");
  const error = h("div");
  const update = () => {
    status.textContent = `${count(shown)} ${spec.noun} shown${cursor ? "; more available" : ""}`;
    more.hidden = !cursor;
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const page = await api(spec.path, { ...query, cursor });
      for (const row of page.data) {
        body.append(tableRow(spec.columns, row, { rowClass: spec.rowClass }));
      }
      shown += page.data.length;
      cursor = page.next_cursor;
      error.replaceChildren();
    } catch (e) {
      refusedKey(e);
      error.replaceChildren(errorBox(e));
    } finally {
      more.disabled = false;
      update();
    }
  });
  update();
  return h(
    "div",
    {},
    h("h1", {}, spec.title),
    h("section", { class: "panel" }, form),
    h(
      "section",
      { class: "panel", "aria-label": `${spec.title} found`, style: null },
      status,
      first.data.length === 0
        ? h("p", { class: "muted" }, `No ${spec.noun} match these filters.`)
        : tableNode,
      h("div", { class: "more" }, more, error),
    ),
  );
}

const timeFields = (filters) => [
  input("After", "after", toLocalInput(filters.after), { type: "datetime-local", step: 1 }),
  input("Before", "before", toLocalInput(filters.before), { type: "datetime-local", step: 1 }),
];
const actorFields = (filters) => [
  input("Actor id", "actor", filters.actor, {
    placeholder: "act_…",
    size: 20,
    list: "known-actors",
  }),
  input("Team (actor ids)", "team", filters.team, { placeholder: "act_…, act_…", size: 24 }),
];
/** Suggestions for the actor field: the API has no actor facet, so the actors of the rows shown. */
function knownActors(rows) {
  const names = new Map(rows.map((r) => [r.actor_id, r.actor_name]));
  return h(
    "datalist",
    { id: "known-actors" },
    [...names].sort().map(([id, name]) => h("option", { value: id }, name || id)),
  );
}

const options = (values, current) => ["", ...new Set([...values, ...(current ? [current] : [])])];

const sessionLink = (id) =>
  h(
    "a",
    { href: route(`session/${encodeURIComponent(id)}`), class: "mono", title: id },
    id.length > 18 ? `${id.slice(0, 18)}…` : id,
  );

/** The sessions list (spec 4.2). */
export function sessionsView(routeInfo) {
  return listView(routeInfo, {
    view: "sessions",
    title: "Sessions",
    noun: "sessions",
    path: "/v1/sessions",
    facetsPath: "/v1/sessions/facets",
    filters: ["agent", "domain", "actor", "team", "after", "before"],
    fields: (filters, facets) => [
      select("Agent", "agent", options(facets.agents, filters.agent), filters.agent),
      select("Domain reached", "domain", options(facets.domains, filters.domain), filters.domain),
      ...actorFields(filters),
      ...timeFields(filters),
    ],
    columns: [
      { label: "Last seen", cell: (s) => when(s.last_seen) },
      { label: "Session", cell: (s) => sessionLink(s.session_id) },
      { label: "Actor", cell: (s) => h("span", { title: s.actor_id }, s.actor_name || s.actor_id) },
      {
        label: "Agent",
        cell: (s) => `${s.agent_system}${s.agent_version ? ` ${s.agent_version}` : ""}`,
      },
      { label: "Model", cell: (s) => s.model || h("span", { class: "muted" }, "—") },
      countColumn("Calls", "tool_call_count"),
      {
        label: "Errors",
        num: true,
        cell: (s) =>
          s.error_count > 0 ? h("span", { class: "outcome-error" }, count(s.error_count)) : "0",
      },
      { label: "Duration", num: true, cell: (s) => duration(s.total_duration_ms) },
      costColumn(),
    ],
  });
}

/** The tool-calls list (spec 4.5). */
export function toolCallsView(routeInfo) {
  return listView(routeInfo, {
    view: "tool-calls",
    title: "Tool calls",
    noun: "tool calls",
    path: "/v1/tool-calls",
    facetsPath: "/v1/tool-calls/facets",
    filters: [
      "tool_name",
      "tool_type",
      "category",
      "outcome",
      "session_id",
      "actor",
      "team",
      "after",
      "before",
    ],
    fields: (filters, facets) => [
      select("Tool", "tool_name", options(facets.tool_names, filters.tool_name), filters.tool_name),
      select(
        "Tool type",
        "tool_type",
        options(facets.tool_types, filters.tool_type),
        filters.tool_type,
      ),
      select(
        "Category",
        "category",
        options(facets.categories, filters.category),
        filters.category,
      ),
      select("Outcome", "outcome", [["", "any"], ["ok", "ok"], ["error", "error"], [
        "rejected",
        "denied",
      ]], filters.outcome),
      input("Session id", "session_id", filters.session_id, { size: 20 }),
      ...actorFields(filters),
      ...timeFields(filters),
    ],
    columns: [
      {
        label: "Time",
        cell: (c) =>
          h("a", { href: route(`tool-call/${encodeURIComponent(c.id)}`) }, when(c.timestamp)),
      },
      { label: "Tool", cell: (c) => h("code", {}, c.tool_name) },
      { label: "Category", cell: (c) => c.category },
      { label: "Outcome", cell: (c) => outcomeBadge(c.outcome) },
      { label: "Duration", num: true, cell: (c) => duration(c.duration_ms) },
      { label: "Actor", cell: (c) => h("span", { title: c.actor_id }, c.actor_name || c.actor_id) },
      { label: "Session", cell: (c) => sessionLink(c.session_id) },
      {
        label: "Error or decision",
        cell: (c) => c.error_message ? c.error_message.slice(0, 120) : decisionText(c),
      },
    ],
  });
}

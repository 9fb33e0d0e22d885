// Fleet (docs/api.md §4.19): per actor, when it was last seen, its sessions of the last 7 days, the
// agents and versions it runs (outdated ones marked) and what of its telemetry the server did not
// understand; "silent for N days" keeps the actors that went quiet.
import { api } from "./api.js";
import { count, countColumn, filtersForm, h, input, route, table, when } from "./dom.js";

const DAY_MS = 86_400_000;
const numeric = new Intl.Collator("en", { numeric: true });

/**
 * Orders two versions by their numbers ("2.1.240" after "2.1.88", "v22.1" after "v20.9"); a
 * pre-release ("1.0.0-beta") comes before its release.
 */
export function compareVersions(a, b) {
  const [coreA, ...preA] = a.replace(/^v/i, "").split("-");
  const [coreB, ...preB] = b.replace(/^v/i, "").split("-");
  const core = numeric.compare(coreA, coreB);
  if (core !== 0) return core;
  if (preA.length === 0 || preB.length === 0) return preB.length - preA.length;
  return numeric.compare(preA.join("-"), preB.join("-"));
}

/** The newest version of each agent among `actors` (versions not reported are left out). */
function newestVersions(actors) {
  const newest = new Map();
  for (const actor of actors) {
    for (const { agent, agent_version: version } of actor.agents) {
      if (!version) continue;
      const known = newest.get(agent);
      if (known === undefined || compareVersions(version, known) > 0) newest.set(agent, version);
    }
  }
  return newest;
}

/** "3 d ago", "5 h ago", "12 min ago", "just now". */
function ago(iso, now) {
  const ms = now - Date.parse(iso);
  if (ms >= DAY_MS) return `${Math.floor(ms / DAY_MS)} d ago`;
  if (ms >= 3_600_000) return `${Math.floor(ms / 3_600_000)} h ago`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)} min ago`;
  return "just now";
}

/** The Fleet page; with `silent_days`, only the actors silent that long. */
export async function fleetView({ params }) {
  const silentDays = (params.get("silent_days") ?? "").trim();
  // Outdated means older than the newest version anywhere in the organization, so a filtered
  // page still compares against every actor's versions.
  const [shown, all] = await Promise.all([
    api("/v1/fleet", { silent_days: silentDays }),
    silentDays ? api("/v1/fleet") : null,
  ]);
  const newest = newestVersions((all ?? shown).data);
  const now = Date.now();
  const isOutdated = (row) => {
    const latest = newest.get(row.agent);
    return Boolean(row.agent_version) && compareVersions(row.agent_version, latest) < 0;
  };

  const form = filtersForm(
    "Fleet filters",
    "fleet",
    (data) => ({ silent_days: String(data.get("silent_days") ?? "").trim() }),
    input("Silent for at least (days)", "silent_days", silentDays, {
      type: "number",
      min: 1,
      max: 3650,
      step: 1,
      placeholder: "any",
      size: 8,
    }),
    h("button", { type: "submit" }, "Apply"),
    silentDays
      ? h("a", { href: route("fleet") }, "All actors")
      : h("a", { href: route("fleet", { silent_days: 7 }) }, "Silent for 7 days"),
  );

  const actors = shown.data;
  const outdated = actors.filter((a) => a.agents.some(isOutdated)).length;
  const confused = actors.filter((a) => notUnderstood(a.unmapped_events).length > 0).length;
  const kpi = (label, value, id) =>
    h(
      "li",
      { class: "kpi" },
      h("span", { class: "label" }, label),
      h("span", { class: "value", "data-fleet": id }, count(value)),
    );

  const columns = [
    {
      label: "Actor",
      cell: (a) =>
        h(
          "div",
          {},
          h(
            "a",
            {
              href: route("sessions", { actor: a.actor_id }),
              "data-actor-sessions": a.actor_id,
              title: `Sessions of ${a.actor_name || a.actor_id}`,
            },
            a.actor_name || a.actor_id,
          ),
          h("div", { class: "mono muted" }, a.actor_id),
        ),
    },
    {
      label: "Last seen",
      cell: (a) =>
        a.last_seen
          ? h(
            "div",
            { "data-last-seen": a.last_seen },
            when(a.last_seen),
            h("div", { class: "note" }, ago(a.last_seen, now)),
          )
          : h("span", { class: "muted" }, "never sent telemetry"),
    },
    countColumn("Sessions (7 days)", "sessions_7d"),
    {
      label: "Agents and versions",
      cell: (a) => agentsList(a.agents, isOutdated, newest, now),
    },
    { label: "Not understood", cell: (a) => unmappedList(notUnderstood(a.unmapped_events)) },
  ];

  return h(
    "div",
    {},
    h("h1", {}, "Fleet"),
    h(
      "section",
      { class: "panel" },
      form,
      h(
        "p",
        { class: "note" },
        silentDays
          ? `Actors that sent nothing for at least ${silentDays} days, or never sent.`
          : "Every actor of the organization, most recently seen first. Versions are marked outdated when the organization has a newer one of the same agent.",
      ),
    ),
    h(
      "ul",
      { class: "kpis", "aria-label": "Fleet figures" },
      kpi(silentDays ? "Silent actors" : "Actors", actors.length, "actors"),
      kpi("Running an outdated version", outdated, "outdated"),
      kpi("Sending telemetry not understood", confused, "unmapped"),
    ),
    h(
      "section",
      { class: "panel stacked", "aria-label": "Actors" },
      actors.length === 0
        ? h(
          "p",
          { class: "muted" },
          silentDays ? `No actor has been silent for ${silentDays} days.` : "No actors yet.",
        )
        : table("Actors", columns, actors, {
          hideCaption: true,
          rowClass: (a) => a.agents.some(isOutdated) ? "outdated" : null,
        }),
    ),
  );
}

/** An actor's agents and versions, each with its last time; outdated versions marked. */
function agentsList(agents, isOutdated, newest, now) {
  if (agents.length === 0) return h("span", { class: "muted" }, "—");
  return h(
    "ul",
    { class: "plain" },
    agents.map((row) => {
      const old = isOutdated(row);
      return h(
        "li",
        {
          "data-agent": row.agent,
          "data-version": row.agent_version,
          "data-outdated": old ? "true" : null,
        },
        h("span", { class: "nowrap" }, row.agent, " "),
        row.agent_version
          ? h("code", {}, row.agent_version)
          : h("span", { class: "muted" }, "version not reported"),
        old
          ? [
            " ",
            h("span", { class: "badge outdated", title: `newest: ${newest.get(row.agent)}` }, [
              "outdated",
              h("span", { class: "sr" }, `, newest is ${newest.get(row.agent)}`),
            ]),
          ]
          : null,
        h("span", { class: "note", title: when(row.last_seen) }, ` · ${ago(row.last_seen, now)}`),
      );
    }),
  );
}

/**
 * What the server did not understand: every row but the events the mapping
 * names and does not keep on purpose (`not_kept`, as `user_prompt`).
 */
function notUnderstood(events) {
  return events.filter((e) => e.reason !== "not_kept");
}

/** What the server did not understand: event names with their record counts. */
function unmappedList(events) {
  if (events.length === 0) return h("span", { class: "muted" }, "—");
  return h(
    "ul",
    { class: "plain" },
    events.map((e) =>
      h(
        "li",
        { "data-event": e.event_name, title: `last ${when(e.last_seen)}` },
        h("code", {}, e.event_name),
        ` × ${count(e.records)}`,
        h("span", { class: "note" }, ` · ${e.agent}, ${e.reason.replaceAll("_", " ")}`),
      )
    ),
  );
}

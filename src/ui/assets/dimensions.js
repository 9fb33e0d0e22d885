// Dimension filters (docs/api.md §4.22): `dim.<key>=<value>` in the URL, one select per key fed
// by GET /v1/dimensions, and the same parameters on every request a view makes.
import { api } from "./api.js";
import { select } from "./dom.js";

const PREFIX = "dim.";

/**
 * The dimension filters of URL parameters or a submitted form's data: `{ "dim.<key>": value }`,
 * the first non-empty value of each key ("all" is the empty value).
 */
export function dimensionFilters(params) {
  const dims = {};
  for (const [name, value] of params) {
    if (!name.startsWith(PREFIX) || name.length === PREFIX.length || name in dims) continue;
    const text = String(value);
    if (text !== "") dims[name] = text;
  }
  return dims;
}

/** The organization's dimension keys with their values: `[{ key, values }]`, sorted by key. */
export async function loadDimensions() {
  return (await api("/v1/dimensions")).data;
}

/**
 * One select per key, "all" first: the organization's keys and values, and a key or value the URL
 * names that the API does not list (so it shows, and can be cleared).
 */
export function dimensionSelects(dimensions, dims) {
  const keys = new Map(dimensions.map((d) => [d.key, d.values]));
  for (const name of Object.keys(dims)) {
    const key = name.slice(PREFIX.length);
    if (!keys.has(key)) keys.set(key, []);
  }
  return [...keys].map(([key, values]) => {
    const current = dims[PREFIX + key] ?? "";
    const listed = current === "" || values.includes(current) ? values : [...values, current];
    return select(
      key,
      PREFIX + key,
      [["", "all"], ...listed.map((v) => [v, v])],
      current,
      { "data-dimension": key },
    );
  });
}

/** The choices of "group by": none, actor, agent, then each dimension key (`dim.<key>`). */
export function groupByOptions(dimensions, current) {
  const options = [["", "none"], ["actor", "actor"], ["agent", "agent"]];
  for (const { key } of dimensions) options.push([PREFIX + key, key]);
  if (current && !options.some(([value]) => value === current)) {
    options.push([current, current.startsWith(PREFIX) ? current.slice(PREFIX.length) : current]);
  }
  return options;
}

/** What a group-by value groups by, in words: "actor", "agent" or the dimension's key. */
export function groupByLabel(groupBy) {
  return groupBy.startsWith(PREFIX) ? groupBy.slice(PREFIX.length) : groupBy;
}

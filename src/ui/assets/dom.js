// Small DOM helpers: elements from data, never from HTML strings (no injection, CSP-clean).

/**
 * Creates an element: `h("a", { href, class: "x" }, "text", child)`. Attributes with null,
 * undefined or false values are left out; `on*` functions become listeners.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

const integers = new Intl.NumberFormat("en-US");
const decimals = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });
const dollars = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

/** A count with thousands separators. */
export function count(n) {
  return n === null || n === undefined ? "—" : integers.format(n);
}

/** A number with at most one decimal. */
export function decimal(n) {
  return n === null || n === undefined ? "—" : decimals.format(n);
}

const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

/** US dollars: cents from a dollar up, fractions of a cent below. */
export function usd(n) {
  return Math.abs(n ?? 0) >= 1 ? cents.format(n) : dollars.format(n ?? 0);
}

/** An estimated cost, marked as such: "≈ $1.23 est." (docs/api.md §2.13). */
export function estimated(n) {
  return `≈ ${usd(n)} est.`;
}

/**
 * A cost as the agent reported it and as the price table estimated the rest: "$1.20",
 * "≈ $0.08 est.", "$1.20 + ≈ $0.08 est.", or `none` when neither.
 */
export function costText(reported, estimate, none = "—") {
  const parts = [];
  if (reported > 0) parts.push(usd(reported));
  if (estimate > 0) parts.push(estimated(estimate));
  return parts.length === 0 ? none : parts.join(" + ");
}

/** A duration in ms as "850 ms", "4.2 s", "3 min 5 s", "1 h 2 min". */
export function duration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${decimals.format(ms / 1000)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A timestamp in the user's locale, to the second. */
export function when(iso) {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** The outcome as the dashboard says it (spec 2.2: `rejected` is shown as "denied"). */
export function outcomeBadge(outcome) {
  const label = outcome === "rejected" ? "denied" : outcome;
  return h("span", { class: `badge outcome-${outcome}` }, label);
}

/** A permission decision and, when reported, what made it: "reject (user_reject)". */
export function decisionText(call) {
  if (!call.decision) return "";
  return call.decision_source ? `${call.decision} (${call.decision_source})` : call.decision;
}

/** `#/view?params` for a link; empty values are left out. */
export function route(view, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const one of [value].flat()) {
      if (one !== undefined && one !== null && one !== "") query.append(name, String(one));
    }
  }
  const text = query.toString();
  return `#/${view}${text ? `?${text}` : ""}`;
}

/** A table: `columns` are `{ label, cell(row), num? }`; `caption` names it for screen readers. */
export function table(caption, columns, rows, options = {}) {
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      {},
      h("caption", { class: options.hideCaption ? "sr" : null }, caption),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : null }, c.label)),
        ),
      ),
      tableBody(columns, rows, options),
    ),
  );
}

/** A column of {@link table} with a row's count `field`, right-aligned. */
export function countColumn(label, field) {
  return { label, num: true, cell: (row) => count(row[field]) };
}

/** The "Cost" column of {@link table}: a row's reported and estimated cost, a muted dash when neither. */
export function costColumn() {
  return {
    label: "Cost",
    num: true,
    cell: (row) =>
      row.cost_usd > 0 || row.estimated_cost_usd > 0
        ? costText(row.cost_usd, row.estimated_cost_usd)
        : h("span", { class: "muted" }, "—"),
  };
}

/** The `<tbody>` of {@link table}, also used to append a further page. */
export function tableBody(columns, rows, options = {}) {
  return h("tbody", {}, rows.map((row) => tableRow(columns, row, options)));
}

/** One row of {@link table}. */
export function tableRow(columns, row, options = {}) {
  return h(
    "tr",
    { class: options.rowClass?.(row) ?? null },
    columns.map((c) => h("td", { class: c.num ? "num" : null }, c.cell(row))),
  );
}

/** The API's error shown in its own words, with its code. */
export function errorBox(error) {
  const code = error?.code ?? "error";
  const message = error?.message ?? String(error);
  return h("div", { class: "error-box", role: "alert" }, h("code", {}, code), ": ", message);
}

/** A filters form: submitting it opens `view` with the parameters `paramsOf` reads from its data. */
export function filtersForm(label, view, paramsOf, ...children) {
  const form = h("form", {
    class: "filters",
    "aria-label": label,
    onsubmit: (event) => {
      event.preventDefault();
      location.hash = route(view, paramsOf(new FormData(form)));
    },
  }, ...children);
  return form;
}

/** A section panel with a heading. */
export function panel(title, ...children) {
  const id = `p-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return h("section", { class: "panel", "aria-labelledby": id }, h("h2", { id }, title), children);
}

/** A labelled `<select>`. */
export function select(label, name, options, value, attributes = {}) {
  return h(
    "label",
    {},
    label,
    h(
      "select",
      { name, ...attributes },
      options.map((o) => {
        const [v, text] = Array.isArray(o) ? o : [o, o === "" ? "any" : o];
        return h("option", { value: v, selected: v === value }, text);
      }),
    ),
  );
}

/** A labelled `<input>`. */
export function input(label, name, value, attributes = {}) {
  return h("label", {}, label, h("input", { name, value: value ?? "", ...attributes }));
}

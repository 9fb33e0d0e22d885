// Charts drawn by uPlot (loaded as a classic script: globalThis.uPlot), coloured from the page's
// CSS variables so they follow the light or dark scheme.
import { h } from "./dom.js";

function cssColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

const dayLabel = new Intl.DateTimeFormat(undefined, {
  month: "short",
  day: "numeric",
  timeZone: "UTC",
});

/** Fixed series colours (distinguishable in both schemes), then the outcome colours by name. */
const PALETTE = ["--accent", "--error", "--rejected", "--ok", "--flag"];

/**
 * A time-series chart of `series` (`[{ label, values, colour? }]`) over `buckets` (ISO strings),
 * drawn as bars (`bars: true`) or lines, with a text summary for screen readers.
 */
export function timeChart({ title, summary, buckets, series, bars = false, height = 240 }) {
  const figure = h("figure", { class: "chart", role: "group", "aria-label": title });
  const target = h("div", { role: "img", "aria-label": `${title}: ${summary}` });
  const legend = h(
    "div",
    { class: "legend", "aria-hidden": "true" },
    series.map((s, i) => {
      const swatch = h("span", { class: "swatch" });
      swatch.style.background = cssColor(s.colour ?? PALETTE[i % PALETTE.length]);
      return h("span", {}, swatch, s.label);
    }),
  );
  figure.append(target, legend, h("figcaption", { class: "sr" }, summary));
  if (!globalThis.uPlot || buckets.length === 0) {
    target.append(
      h("p", { class: "muted" }, buckets.length === 0 ? "No data in this window." : summary),
    );
    return figure;
  }
  const x = buckets.map((b) => Date.parse(b) / 1000);
  // Half a bucket of room at each end, so the first and last bars are whole.
  const step = x.length > 1 ? Math.min(...x.slice(1).map((v, i) => v - x[i])) : 86400;
  const pad = step / 2;
  const axisColour = cssColor("--muted");
  const gridColour = cssColor("--border");
  const axis = {
    stroke: axisColour,
    grid: { stroke: gridColour, width: 1 },
    ticks: { stroke: gridColour, width: 1 },
  };
  const draw = () => {
    const width = Math.max(280, target.clientWidth || figure.clientWidth || 600);
    const options = {
      width,
      height,
      cursor: { drag: { x: false, y: false } },
      legend: { show: false },
      scales: { x: { time: true, range: (_u, min, max) => [min - pad, max + pad] } },
      axes: [
        {
          ...axis,
          // One tick per bucket (every k-th when they are many), labelled with its date.
          splits: () => x.filter((_, i) => i % Math.ceil(x.length / 12) === 0),
          values: (_u, splits) => splits.map((t) => dayLabel.format(new Date(t * 1000))),
        },
        { ...axis, size: 60 },
      ],
      series: [
        { label: "Day" },
        ...series.map((s, i) => {
          const colour = cssColor(s.colour ?? PALETTE[i % PALETTE.length]);
          return {
            label: s.label,
            stroke: colour,
            width: 2,
            fill: bars ? colour : `${colour}22`,
            paths: bars
              ? globalThis.uPlot.paths.bars({ size: [0.7, 40], align: 0, gap: 2 })
              : undefined,
            points: { show: !bars && buckets.length < 40 },
          };
        }),
      ],
    };
    target.replaceChildren();
    new globalThis.uPlot(options, [x, ...series.map((s) => s.values)], target);
  };
  // Drawn once the figure is in the page, when its width is known.
  requestAnimationFrame(() => requestAnimationFrame(draw));
  return figure;
}

/**
 * The built-in read-only dashboard (issue #17): static files served by the
 * query listener at `/ui/`, with `/` redirecting there. The files are text
 * imports, so `deno compile` and the offline release carry them; the browser
 * talks to the public `/v1/` API only, with the user's own API key.
 *
 * @module
 */
import indexHtml from "./assets/index.html" with { type: "text" };
import styleCss from "./assets/style.css" with { type: "text" };
import faviconSvg from "./assets/favicon.svg" with { type: "text" };
import appJs from "./assets/app.js" with { type: "text" };
import apiJs from "./assets/api.js" with { type: "text" };
import domJs from "./assets/dom.js" with { type: "text" };
import chartsJs from "./assets/charts.js" with { type: "text" };
import dimensionsJs from "./assets/dimensions.js" with { type: "text" };
import overviewJs from "./assets/overview.js" with { type: "text" };
import listsJs from "./assets/lists.js" with { type: "text" };
import sessionJs from "./assets/session.js" with { type: "text" };
import toolCallJs from "./assets/tool_call.js" with { type: "text" };
import riskJs from "./assets/risk.js" with { type: "text" };
import fleetJs from "./assets/fleet.js" with { type: "text" };
import uplotJs from "uplot/dist/uPlot.iife.min.js" with { type: "text" };
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "text" };

/** Where the dashboard lives on the query listener. */
export const UI_PREFIX = "/ui/";

/**
 * The page's Content-Security-Policy: scripts, styles and API calls from this
 * origin only, nothing inline, nothing remote, no framing.
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const JS = "text/javascript; charset=utf-8";

/** Every file of the dashboard by its path under `/ui/`, with its media type. */
export const UI_ASSETS: ReadonlyMap<string, { body: string; type: string }> = new Map([
  ["", { body: indexHtml, type: "text/html; charset=utf-8" }],
  ["style.css", { body: styleCss, type: "text/css; charset=utf-8" }],
  ["favicon.svg", { body: faviconSvg, type: "image/svg+xml" }],
  ["app.js", { body: appJs, type: JS }],
  ["api.js", { body: apiJs, type: JS }],
  ["dom.js", { body: domJs, type: JS }],
  ["charts.js", { body: chartsJs, type: JS }],
  ["dimensions.js", { body: dimensionsJs, type: JS }],
  ["overview.js", { body: overviewJs, type: JS }],
  ["lists.js", { body: listsJs, type: JS }],
  ["session.js", { body: sessionJs, type: JS }],
  ["tool_call.js", { body: toolCallJs, type: JS }],
  ["risk.js", { body: riskJs, type: JS }],
  ["fleet.js", { body: fleetJs, type: JS }],
  ["vendor/uplot.js", { body: uplotJs, type: JS }],
  ["vendor/uplot.css", { body: uplotCss, type: "text/css; charset=utf-8" }],
]);

const encoder = new TextEncoder();
const served = new Map(
  [...UI_ASSETS].map(([path, asset]) => {
    const bytes = encoder.encode(asset.body);
    return [path, { bytes, type: asset.type, etag: `"${contentTag(bytes)}"` }];
  }),
);

/**
 * The dashboard's answer to a request, or null when the path is not the
 * dashboard's (`/` and `/ui…`). Files are revalidated on every load (ETag,
 * `no-cache`): names carry no hash, and a new release must show at once.
 */
export function uiResponse(request: Request, url: URL): Response | null {
  if (url.pathname === "/" || url.pathname === "/ui") {
    if (!readMethod(request)) return methodNotAllowed();
    return new Response(null, { status: 302, headers: { location: UI_PREFIX } });
  }
  if (!url.pathname.startsWith(UI_PREFIX)) return null;
  const asset = served.get(url.pathname.slice(UI_PREFIX.length));
  if (!asset) return null;
  if (!readMethod(request)) return methodNotAllowed();
  const headers = {
    "content-type": asset.type,
    "cache-control": "no-cache",
    "etag": asset.etag,
    "content-security-policy": UI_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
  };
  if (request.headers.get("if-none-match") === asset.etag) {
    return new Response(null, { status: 304, headers });
  }
  const body = request.method === "HEAD" ? null : asset.bytes;
  return new Response(body, { headers: { ...headers, "content-length": `${asset.bytes.length}` } });
}

/** Whether the dashboard answers `path` (its files and the redirects): its metrics route label. */
export function isUiPath(path: string): boolean {
  return path === "/" || path === "/ui" ||
    path.startsWith(UI_PREFIX) && served.has(path.slice(UI_PREFIX.length));
}

function readMethod(request: Request): boolean {
  return request.method === "GET" || request.method === "HEAD";
}

function methodNotAllowed(): Response {
  return new Response("Method Not Allowed", {
    status: 405,
    headers: { "content-type": "text/plain; charset=utf-8", allow: "GET, HEAD" },
  });
}

/** FNV-1a (32 bits) and the length, as hex: a cheap content tag computed once at start. */
function contentTag(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193);
  return `${(hash >>> 0).toString(16).padStart(8, "0")}-${bytes.length.toString(16)}`;
}

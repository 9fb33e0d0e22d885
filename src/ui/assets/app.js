// The dashboard's shell: key prompt, navigation, and a hash router (#/view/id?filters) so the
// URL holds the whole state of a view and the back button works.
import { api, ApiError, forgetKey, storedKey, storeKey } from "./api.js";
import { errorBox, h } from "./dom.js";

const views = {
  overview: () => import("./overview.js").then((m) => m.overviewView),
  sessions: () => import("./lists.js").then((m) => m.sessionsView),
  "tool-calls": () => import("./lists.js").then((m) => m.toolCallsView),
  session: () => import("./session.js").then((m) => m.sessionView),
  "tool-call": () => import("./tool_call.js").then((m) => m.toolCallView),
  risk: () => import("./risk.js").then((m) => m.riskView),
  fleet: () => import("./fleet.js").then((m) => m.fleetView),
};

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const signOut = document.getElementById("sign-out");
let renderCount = 0;

/** The current location as `{ view, id, params }`. */
function currentRoute() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = hash.split("?", 2);
  const [view, ...rest] = path.split("/");
  return {
    view: views[view] ? view : "overview",
    id: rest.length ? decodeURIComponent(rest.join("/")) : null,
    params: new URLSearchParams(query),
  };
}

/** Shows the key prompt; `reason` is the API's message when a key was refused. */
function showSignIn(reason) {
  nav.hidden = true;
  signOut.hidden = true;
  const field = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    placeholder: "wb_api_…",
    "aria-describedby": "key-help",
  });
  const status = h("div", { id: "signin-status", "aria-live": "polite" });
  if (reason) status.append(errorBox(reason));
  const form = h(
    "form",
    {
      onsubmit: async (event) => {
        event.preventDefault();
        const key = field.value.trim();
        status.replaceChildren(h("p", { class: "muted" }, "Checking the key…"));
        try {
          await api("/v1/ping", {}, key);
          storeKey(key);
          render();
        } catch (error) {
          status.replaceChildren(errorBox(error));
          field.select();
        }
      },
    },
    h("label", { for: "api-key" }, "API key"),
    field,
    h(
      "p",
      { id: "key-help", class: "note" },
      "An organization API key (wb_api_…). It is kept in this tab only and sent to this server as a Bearer token.",
    ),
    h("button", { type: "submit" }, "Sign in"),
  );
  main.replaceChildren(
    h("div", { class: "signin panel" }, h("h1", {}, "Sign in"), form, status),
  );
  document.title = "Sign in · Agent Telemetry";
  field.focus();
}

/** Renders the view the URL names; a refused key brings the prompt back. */
async function render() {
  const key = storedKey();
  if (!key) return showSignIn(null);
  const ticket = ++renderCount;
  const route = currentRoute();
  nav.hidden = false;
  signOut.hidden = false;
  for (const link of nav.querySelectorAll("a")) {
    const active = link.dataset.view === route.view ||
      (link.dataset.view === "sessions" && route.view === "session") ||
      (link.dataset.view === "tool-calls" && route.view === "tool-call");
    if (active) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  try {
    const view = await views[route.view]();
    const node = await view(route);
    if (ticket !== renderCount) return;
    main.replaceChildren(node);
    scrollTo(0, 0);
    performance.mark(`rendered:${route.view}`);
    const heading = main.querySelector("h1");
    document.title = `${heading ? heading.textContent : "Dashboard"} · Agent Telemetry`;
  } catch (error) {
    if (ticket !== renderCount) return;
    if (error instanceof ApiError && error.status === 401) return showSignIn(error);
    main.replaceChildren(h("h1", {}, "Something went wrong"), errorBox(error));
  }
}

/** Re-renders on a 401 from any later request of a view (e.g. "load more"). */
globalThis.addEventListener("unhandledrejection", (event) => {
  if (event.reason instanceof ApiError && event.reason.status === 401) showSignIn(event.reason);
});
document.addEventListener("api-unauthenticated", (event) => showSignIn(event.detail));

signOut.addEventListener("click", () => {
  forgetKey();
  showSignIn(null);
});
globalThis.addEventListener("hashchange", () => {
  render();
  main.focus({ preventScroll: true });
});
render();

// The dashboard's only way to the server: the public /v1/ API with the user's key.

const KEY = "agent-telemetry.api-key";

/** An error answer of the API, in its own words (`{error: {code, message}}`). */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * Whether `error` is the API refusing the key (401); if so, tells the app, which asks for the key
 * again.
 */
export function refusedKey(error) {
  if (!(error instanceof ApiError) || error.status !== 401) return false;
  document.dispatchEvent(new CustomEvent("api-unauthenticated", { detail: error }));
  return true;
}

/** The key the user entered in this tab, or null. */
export function storedKey() {
  return sessionStorage.getItem(KEY);
}

/** Keeps the key for this tab only (sessionStorage: gone when the tab closes). */
export function storeKey(key) {
  sessionStorage.setItem(KEY, key);
}

/** Forgets the key. */
export function forgetKey() {
  sessionStorage.removeItem(KEY);
}

/**
 * GETs `path` with `params` (arrays repeat the parameter, empty values are left out) and returns
 * the parsed body. A 401 forgets the key, so the app shows the key prompt again.
 */
export async function api(path, params = {}, key = storedKey()) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params)) {
    for (const one of [value].flat()) {
      if (one !== undefined && one !== null && one !== "") url.searchParams.append(name, one);
    }
  }
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${key ?? ""}` },
    cache: "no-store",
  });
  const text = await response.text();
  let body = null;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  if (response.ok) return body;
  if (response.status === 401) forgetKey();
  const code = body?.error?.code ?? `http_${response.status}`;
  const message = body?.error?.message ?? (text.trim() || response.statusText);
  throw new ApiError(response.status, code, message);
}

/** Fetches `path` for each item, at most `width` at a time, keeping the order. */
export async function apiEach(items, toPath, width = 4) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await api(toPath(items[i]));
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

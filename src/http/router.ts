/**
 * Path matching for the query API: static paths from a map first, then
 * patterns with `:name` segments (one path segment each, percent-decoded).
 *
 * @module
 */

/** A route's handler receives the matched path parameters. */
export interface Route<H> {
  pattern: string;
  handler: H;
}

/** A match: the route's handler and its decoded parameters. */
export interface Match<H> {
  handler: H;
  pattern: string;
  params: Record<string, string>;
}

/** Builds a matcher over a table of routes. */
export function createRouter<H>(routes: readonly Route<H>[]): (path: string) => Match<H> | null {
  const staticRoutes = new Map<string, H>();
  const dynamicRoutes: { pattern: string; segments: string[]; handler: H }[] = [];
  for (const route of routes) {
    if (route.pattern.includes(":")) {
      dynamicRoutes.push({
        pattern: route.pattern,
        segments: route.pattern.split("/"),
        handler: route.handler,
      });
    } else {
      staticRoutes.set(route.pattern, route.handler);
    }
  }
  return (path) => {
    const exact = staticRoutes.get(path);
    if (exact !== undefined) return { handler: exact, pattern: path, params: {} };
    const parts = path.split("/");
    for (const route of dynamicRoutes) {
      const params = matchSegments(route.segments, parts);
      if (params) return { handler: route.handler, pattern: route.pattern, params };
    }
    return null;
  };
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    const actual = parts[i]!;
    if (expected.startsWith(":")) {
      if (actual === "") return null;
      try {
        params[expected.slice(1)] = decodeURIComponent(actual);
      } catch {
        return null;
      }
    } else if (expected !== actual) {
      return null;
    }
  }
  return params;
}

/**
 * The dashboard's files as the query listener serves them (issue #17): the redirect, media types,
 * caching, the Content-Security-Policy, every referenced file present, the size budget and no
 * remote address anywhere.
 *
 * @module
 */
import assert from "node:assert/strict";
import { UI_ASSETS, UI_CSP } from "../src/ui/mod.ts";
import { engineTest, startTestServer } from "./_harness.ts";

/** Remote addresses that are text, not fetches: the SVG namespace and uPlot's license header. */
const NOT_FETCHED = ["http://www.w3.org/2000/svg", "https://github.com/leeoniya/uPlot"];

engineTest("GET / redirects to /ui/, which serves the page under a strict CSP", async () => {
  await using server = await startTestServer();
  const root = await server.get("/", undefined, { redirect: "manual" });
  await root.body?.cancel();
  assert.equal(root.status, 302);
  assert.equal(root.headers.get("location"), "/ui/");
  const page = await server.get("/ui/");
  const html = await page.text();
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(page.headers.get("content-security-policy"), UI_CSP);
  assert.match(html, /<script src="app.js" type="module">/);
  for (const directive of ["script-src 'self'", "style-src 'self'", "connect-src 'self'"]) {
    assert.ok(UI_CSP.includes(directive), directive);
  }
  assert.ok(!UI_CSP.includes("unsafe"), UI_CSP);
  assert.ok(UI_CSP.startsWith("default-src 'none'"), UI_CSP);
  assert.doesNotMatch(html, /<script>|<style>| style=| on[a-z]+=/, "inline script or style");
});

engineTest(
  "every dashboard file is served with its type, revalidated by ETag, no key needed",
  async (t) => {
    await using server = await startTestServer();
    for (const [path, asset] of UI_ASSETS) {
      await t.step(`/ui/${path}`, async () => {
        const response = await server.get(`/ui/${path}`);
        const body = await response.text();
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("content-type"), asset.type);
        assert.equal(response.headers.get("cache-control"), "no-cache");
        assert.equal(response.headers.get("x-content-type-options"), "nosniff");
        assert.equal(body, asset.body);
        const etag = response.headers.get("etag")!;
        assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
        const again = await server.get(`/ui/${path}`, undefined, {
          headers: { "if-none-match": etag },
        });
        assert.equal(again.status, 304);
        assert.equal(await again.text(), "");
      });
    }
  },
);

engineTest(
  "the files have distinct ETags, HEAD has no body, other methods and paths are refused; metrics say /ui/",
  async () => {
    await using server = await startTestServer();
    const tags = new Set<string>();
    for (const path of UI_ASSETS.keys()) {
      const response = await server.get(`/ui/${path}`, undefined, { method: "HEAD" });
      assert.equal(response.status, 200);
      assert.equal(await response.text(), "");
      tags.add(response.headers.get("etag")!);
    }
    assert.equal(tags.size, UI_ASSETS.size);
    const post = await server.get("/ui/", undefined, { method: "POST" });
    assert.equal(post.status, 405);
    assert.equal(await post.text(), "Method Not Allowed");
    const missing = await server.get("/ui/nope.js");
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), "404 page not found");
    const api = await server.get("/v1/sessions");
    assert.equal(api.status, 401, "the dashboard opened the API");
    await api.body?.cancel();
    const metrics = await (await fetch(`${server.ingestUrl}/metrics`)).text();
    const label = (route: string, status: number, count: number) =>
      `agent_telemetry_http_requests_total{listener="query",route="${route}",status="${status}"} ${count}\n`;
    assert.ok(metrics.includes(label("/ui/", 200, UI_ASSETS.size)), metrics);
    assert.ok(metrics.includes(label("unmatched", 404, 1)), metrics);
  },
);

engineTest("every file the page and its modules reference is served", async () => {
  await using server = await startTestServer();
  const referenced = new Set<string>();
  for (const [path, asset] of UI_ASSETS) {
    if (path === "") {
      for (const m of asset.body.matchAll(/(?:href|src)="([^"#]+)"/g)) referenced.add(m[1]!);
    } else if (path.endsWith(".js") && !path.startsWith("vendor/")) {
      for (const m of asset.body.matchAll(/(?:from|import\()\s*"\.\/([^"]+)"/g)) {
        referenced.add(m[1]!);
      }
    }
  }
  assert.ok(
    referenced.has("overview.js") && referenced.has("vendor/uplot.js"),
    [...referenced].join(),
  );
  for (const path of referenced) {
    const response = await server.get(`/ui/${path}`);
    await response.body?.cancel();
    assert.equal(response.status, 200, path);
  }
});

Deno.test("the dashboard's JavaScript is at most 150 KB gzipped and names no remote address", async () => {
  let gzipped = 0;
  for (const [path, asset] of UI_ASSETS) {
    const remote = [...asset.body.matchAll(/(?:https?:)?\/\/[a-z0-9-]+\.[a-z0-9.-]+[^\s"'`)]*/gi)]
      .map((m) => m[0])
      .filter((url) => /^https?:/.test(url) && !NOT_FETCHED.includes(url));
    assert.deepEqual(remote, [], path);
    if (!asset.type.startsWith("text/javascript")) continue;
    const stream = new Blob([asset.body]).stream().pipeThrough(new CompressionStream("gzip"));
    gzipped += (await new Response(stream).arrayBuffer()).byteLength;
  }
  assert.ok(gzipped <= 150 * 1024, `${gzipped} bytes of JavaScript gzipped`);
  assert.ok(gzipped > 20 * 1024, `${gzipped} bytes: is uPlot missing?`);
});

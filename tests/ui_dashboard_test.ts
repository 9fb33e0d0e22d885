/// <reference lib="dom" />
/**
 * The dashboard in a real headless Chromium against the real server on demo data (issue #17).
 *
 * The test re-runs this file inside a new network namespace that has only loopback
 * (`unshare -n`, `ip link set lo up`): Chromium and the server it talks to cannot reach anything
 * else, and every request the page makes must go to 127.0.0.1 or the test fails. Inside, the
 * `demo` command serves synthetic telemetry, one call with a secret and a destructive command is
 * added through the ingest listener, and the browser signs in, reads, filters, pages and drills
 * down as a person would. Screenshots go to a temporary directory, or to
 * `docs/screenshots/` with `AGENT_TELEMETRY_UI_SCREENSHOTS=docs`.
 *
 * @module
 */
import assert from "node:assert/strict";
import axeSource from "axe-core/axe.min.js" with { type: "text" };
import type { Page } from "puppeteer-core";
import { apiRequest, claudeEvent, claudeExport, toolDecision, toolResult } from "./_otlp.ts";
import { CHROMIUM, launchBrowser, offLoopback } from "./_ui_browser.ts";

const INSIDE = Deno.env.get("AGENT_TELEMETRY_UI_NETNS") === "1";
const ROOT = new URL("..", import.meta.url).pathname;
/**
 * Where screenshots go: `docs/screenshots/` (the README's pictures) when
 * `AGENT_TELEMETRY_UI_SCREENSHOTS=docs`, else a temporary directory, so an
 * ordinary test run leaves the checkout as it was.
 */
const SCREENSHOTS = Deno.env.get("AGENT_TELEMETRY_UI_SCREENSHOTS") === "docs"
  ? `${ROOT}docs/screenshots`
  : INSIDE
  ? Deno.makeTempDirSync({ prefix: "agent-telemetry-ui-shots-" })
  : "";
const KEY_ITEM = "agent-telemetry.api-key";
const SECRET = "ghp_FAKE7Zt4Vw9Xy3Bn6Lc1Pd5Fg0Hj2Sa4QeR8";
const numbers = new Intl.NumberFormat("en-US");

if (!INSIDE) {
  Deno.test("dashboard browser tests pass inside a network namespace with only loopback", async () => {
    assert(
      await Deno.stat(CHROMIUM).then(() => true, () => false),
      `${CHROMIUM} is missing: apt-get install -y chromium`,
    );
    const env: Record<string, string> = {
      ...Deno.env.toObject(),
      AGENT_TELEMETRY_UI_NETNS: "1",
      NO_COLOR: "1",
    };
    // PostgreSQL is not reachable from inside the namespace; the demo runs on the embedded store.
    delete env.AGENT_TELEMETRY_TEST_DATABASE_URL;
    const root = Deno.uid() === 0 ? [] : ["--map-root-user"];
    const output = await new Deno.Command("unshare", {
      args: [
        ...root,
        "--net",
        "--",
        "sh",
        "-c",
        'ip link set lo up && exec "$0" test --allow-all "$1"',
        Deno.execPath(),
        new URL(import.meta.url).pathname,
      ],
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    // deno-lint-ignore no-console
    if (!output.success) console.error(text);
    assert(output.success, "the dashboard tests failed inside the namespace (output above)");
    const paint = /overview figures painted after .*/.exec(text);
    // deno-lint-ignore no-console
    if (paint) console.log(paint[0]);
    assert(/ok \| \d+ passed \(\d+ steps\) \| 0 failed/.test(text), text);
  });
} else {
  Deno.test("the dashboard signs in, shows the API's numbers, filters, pages and drills down", async (t) => {
    const interfaces = Deno.networkInterfaces().filter((i) => i.name !== "lo");
    assert.deepEqual(interfaces.map((i) => i.name), [], "not in a loopback-only namespace");

    await using demo = await startDemo();
    const leaky = await addLeakyCall(demo);
    const api = async (path: string) => {
      const response = await fetch(demo.queryUrl + path, {
        headers: { authorization: `Bearer ${demo.apiKey}` },
      });
      assert.deepEqual(response.status, 200, path);
      return await response.json();
    };

    await using browser = await launchBrowser();
    const page = await browser.newPage();
    const cspViolations: string[] = [];
    const pageErrors: string[] = [];
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    const base = `${demo.queryUrl}/ui/`;

    await t.step("/ redirects to the dashboard, which asks for a key", async () => {
      await page.goto(`${demo.queryUrl}/`);
      assert.deepEqual(page.url(), base);
      await page.waitForSelector("#api-key");
      await axeCheck(page, "sign-in");
    });

    await t.step("a wrong key is refused in the API's words and the prompt stays", async () => {
      await page.type("#api-key", "wb_api_notarealkey0000000000000000000000000");
      await page.click("form button[type=submit]");
      await page.waitForSelector(".error-box");
      const said = await text(page, ".error-box");
      assert.deepEqual(said, "unauthenticated: invalid or missing Bearer credential");
      assert.deepEqual(await storedKey(page), null);
      assert(await page.$("#api-key"), "the key prompt is gone");
    });

    await t.step(
      "signing in from the keyboard shows the overview with the API's figures",
      async () => {
        await page.$eval("#api-key", (e) => (e as HTMLInputElement).value = "");
        await page.type("#api-key", demo.apiKey);
        await page.keyboard.press("Enter"); // the key field has the focus: no mouse needed
        await page.waitForSelector("[data-kpi=flags]");
        assert.deepEqual(await storedKey(page), demo.apiKey);
        const activity = await api("/v1/insights/activity?window=7d");
        const risk = await api("/v1/insights/risk?window=7d");
        const domains = await api("/v1/insights/domains?window=7d");
        assert.deepEqual(
          await text(page, "[data-kpi=calls]"),
          numbers.format(activity.summary.total_calls),
        );
        assert.deepEqual(
          await text(page, "[data-kpi=errors]"),
          numbers.format(activity.summary.error_count),
        );
        assert.deepEqual(
          await text(page, "[data-kpi=sessions]"),
          numbers.format(activity.summary.session_count),
        );
        // Two counts of sessions, each labelled with what it counts.
        assert.deepEqual(await text(page, "#sessions-label"), "Sessions with tool calls");
        assert.deepEqual(
          await text(page, "[data-kpi=flags]"),
          numbers.format(risk.summary.total_flags),
        );
        await page.waitForSelector("[data-kpi=domains]");
        assert.deepEqual(
          await text(page, "[data-kpi=domains]"),
          numbers.format(domains.summary.unique_domains),
        );
        await page.waitForSelector("#p-outlier-sessions ~ .scroll, #p-outlier-sessions ~ p");
        await page.waitForSelector(".uplot canvas");
        await page.waitForSelector("[data-productivity=sessions]");
        const productivity = await api("/v1/insights/productivity?window=7d");
        assert.deepEqual(
          await text(page, "[data-productivity=sessions]"),
          numbers.format(productivity.summary.sessions),
        );
        assert.deepEqual(
          await page.$eval(
            "[data-productivity=sessions]",
            (e) => e.previousElementSibling?.textContent ?? "",
          ),
          "Active sessions (calls or metrics)",
        );
        assert.deepEqual(
          await page.$eval("[data-lines-source]", (e) => e.getAttribute("data-lines-source")),
          productivity.summary.lines_source ?? "none",
        );
        await axeCheck(page, "overview");
        await page.screenshot({ path: `${SCREENSHOTS}/overview.png`, fullPage: true });
      },
    );

    await t.step("the overview paints its figures within a second", async () => {
      // Reloads with the key kept, as a user coming back; the best of up to five counts, since
      // the machine is shared with the rest of the suite.
      const times: number[] = [];
      for (let i = 0; i < 5 && !(Math.min(...times) <= 1000); i++) {
        await page.reload();
        await page.waitForSelector("[data-kpi=calls]");
        times.push(
          await page.evaluate(() =>
            performance.getEntriesByName("rendered:overview")[0]!.startTime
          ),
        );
      }
      // deno-lint-ignore no-console
      console.log(
        `overview figures painted after ${times.map((t) => Math.round(t)).join(", ")} ms`,
      );
      assert.ok(Math.min(...times) <= 1000, `first paint ${Math.min(...times)} ms`);
    });

    await t.step("the Errors figure links to the list of failed calls behind it", async () => {
      await page.waitForSelector("[data-kpi=domains]");
      await page.focus("[data-kpi=errors]");
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => location.hash.startsWith("#/tool-calls?"));
      await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Tool calls");
      const hash = await page.evaluate(() => location.hash);
      assert(hash.includes("outcome=error"), hash);
      const outcomes = await page.$$eval("tbody tr .badge", (b) => b.map((e) => e.textContent));
      assert.ok(outcomes.length > 0, `${outcomes.length} is not above 0`);
      assert.deepEqual(new Set(outcomes), new Set(["error"]));
    });

    await t.step(
      "sessions filter by agent from the facets; the URL holds it; back undoes it",
      async () => {
        await page.goto(`${base}#/sessions`);
        await page.waitForSelector("form[aria-label='Sessions filters']");
        const facets = await api("/v1/sessions/facets");
        const options = await page.$$eval(
          "select[name=agent] option",
          (o) => o.map((e) => (e as HTMLOptionElement).value).filter(Boolean),
        );
        assert.deepEqual(options, facets.agents);
        await page.select("select[name=agent]", "gemini-cli");
        await page.click("form.filters button[type=submit]");
        await page.waitForFunction(() => location.hash.includes("agent=gemini-cli"));
        await page.waitForFunction(() =>
          [...document.querySelectorAll("tbody tr td:nth-child(4)")].every((td) =>
            td.textContent!.startsWith("gemini-cli")
          )
        );
        const expected = await api("/v1/sessions?agent=gemini-cli&limit=50");
        const shown = await page.$$eval(
          "tbody tr td:nth-child(2) a",
          (a) => a.map((e) => e.getAttribute("title")),
        );
        assert.deepEqual(
          shown,
          expected.data.map((s: { session_id: string }) => s.session_id),
        );
        await page.goBack();
        await page.waitForFunction(() => location.hash === "#/sessions");
        await page.waitForFunction(() =>
          [...document.querySelectorAll("tbody tr td:nth-child(4)")].some((td) =>
            !td.textContent!.startsWith("gemini-cli")
          )
        );
        assert.deepEqual(
          await page.$eval("select[name=agent]", (s) => (s as HTMLSelectElement).value),
          "",
        );
        await axeCheck(page, "sessions");
      },
    );

    await t.step("Load more appends the API's next page", async () => {
      const first = await api("/v1/sessions?limit=50");
      const second = await api(`/v1/sessions?limit=50&cursor=${first.next_cursor}`);
      assert.deepEqual(await page.$$eval("tbody tr", (r) => r.length), 50);
      await page.click("#load-more");
      await page.waitForFunction(() => document.querySelectorAll("tbody tr").length > 50);
      const ids = await page.$$eval(
        "tbody tr td:nth-child(2) a",
        (a) => a.map((e) => e.getAttribute("title")),
      );
      assert.deepEqual(
        ids,
        [...first.data, ...second.data].map((s: { session_id: string }) => s.session_id),
      );
    });

    await t.step(
      "a session shows its timeline with the risk flags on the call that raised them, and its model calls",
      async () => {
        await page.goto(`${base}#/session/${encodeURIComponent(leaky.session)}`);
        await page.waitForSelector("tr.flagged");
        const flags = await page.$$eval(
          "tr.flagged [data-flag]",
          (b) => b.map((e) => e.getAttribute("data-flag")),
        );
        assert.deepEqual(new Set(flags), new Set(["credential_detected", "destructive_operation"]));
        const detail = await api(`/v1/sessions/${leaky.session}`);
        assert.deepEqual(
          await page.$$eval(".strip span", (s) => s.length),
          detail.tool_calls.length,
        );
        assert.deepEqual(
          await page.$$eval(".strip span.flagged", (s) => s.length),
          1,
        );
        assert(
          (await text(page, "main")).includes("api.github.com"),
          "the session's domain is not shown",
        );
        // Its model calls, oldest first: tokens by kind; a cost not reported is estimated from
        // the price table and marked so (claude-haiku-4-5: 100 × $1 + 50 × $5 + 10 × $0.10 +
        // 5 × $1.25 per million = $0.00035725), or said so for a model the table lacks.
        const modelCalls = await page.$$eval(
          "tr.model-call",
          (rows) => rows.map((row) => [...row.cells].map((cell) => cell.textContent?.trim())),
        );
        assert.equal(modelCalls.length, detail.model_calls.length);
        assert.deepEqual(modelCalls.map((cells) => cells.slice(1)), [
          ["claude-sonnet-4-5 anthropic", "1,200", "340", "8,000", "150", "$0.0421", "900 ms"],
          ["claude-haiku-4-5 anthropic", "100", "50", "10", "5", "≈ $0.0004 est.", "—"],
          ["in-house-model anthropic", "100", "50", "10", "5", "not reported", "—"],
        ]);
        assert(
          (await text(page, "main")).includes("$0.0421 + ≈ $0.0004 est."),
          "the session's estimated cost is not shown as such",
        );
        await axeCheck(page, "session");
        await page.screenshot({ path: `${SCREENSHOTS}/session.png`, fullPage: true });
      },
    );

    await t.step(
      "a tool call shows its arguments with the redaction marker and its decision",
      async () => {
        await page.click("tr.flagged td:nth-child(2) a");
        await page.waitForSelector("mark.redacted");
        assert.deepEqual(await text(page, "mark.redacted"), "[REDACTED:github_pat]");
        const shown = await text(page, "main");
        assert(!shown.includes(SECRET), "the secret is shown");
        assert(shown.includes("rm -rf"), "the arguments are not shown");
        const call = await api(`/v1/tool-calls/${leaky.callId}`);
        assert.deepEqual(page.url(), `${base}#/tool-call/${leaky.callId}`);
        const decision = await page.$$eval(
          "#p-decision-and-error ~ dl dd",
          (d) => d.map((e) => e.textContent),
        );
        assert.deepEqual(decision.slice(0, 2), [call.decision, call.decision_source]);
        await axeCheck(page, "tool call");
        await page.screenshot({ path: `${SCREENSHOTS}/tool-call.png` });
      },
    );

    await t.step("risk lists flags by kind and drills down to the calls", async () => {
      await page.goto(`${base}#/risk?flag=credential_detected`);
      await page.waitForFunction(() =>
        document.querySelector("#scan-more")?.hasAttribute("disabled") === false
      );
      const risk = await api("/v1/insights/risk?window=7d");
      assert.deepEqual(
        await text(page, "[data-kpi=total_flags]"),
        numbers.format(risk.summary.total_flags),
      );
      await page.waitForSelector(`a[href="#/tool-call/${leaky.callId}"]`);
      await axeCheck(page, "risk");
    });

    await t.step(
      "the Fleet page lists the organization's actors with their versions, silence and sessions",
      async () => {
        const fleet = await addFleet(demo);
        const ids = (body: { data: { actor_id: string }[] }) => body.data.map((a) => a.actor_id);
        const shownIds = () =>
          page.$$eval(
            "tbody tr [data-actor-sessions]",
            (links) => links.map((a) => a.getAttribute("data-actor-sessions")),
          );
        const oldRow = `tr:has([data-actor-sessions="${fleet.oldActor}"])`;

        // Every actor of this organization in the API's order; the other organization's not.
        const all = await api("/v1/fleet");
        await page.click("nav a[data-view=fleet]");
        await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Fleet");
        await page.waitForSelector("[data-fleet=actors]");
        assert.deepEqual(await shownIds(), ids(all));
        assert.ok(ids(all).includes(fleet.oldActor), "the old actor is not in the fleet");
        assert.ok(!ids(all).includes(fleet.theirs), "the API answered another organization");
        assert.ok(!(await text(page, "main")).includes("other-org-laptop"), "the other org shows");
        assert.deepEqual(await text(page, "[data-fleet=actors]"), numbers.format(all.data.length));

        // The old actor: seen ten days ago, no session this week; another's two unknown events.
        const old = all.data.find((a: { actor_id: string }) => a.actor_id === fleet.oldActor);
        assert.deepEqual(
          await page.$eval(`${oldRow} [data-last-seen]`, (e) => e.getAttribute("data-last-seen")),
          old.last_seen,
        );
        assert.match(await text(page, `${oldRow} [data-last-seen] .note`), /^10 d ago$/);
        assert.deepEqual(await text(page, `${oldRow} td:nth-child(3)`), "0");
        assert.match(
          await text(
            page,
            `tr:has([data-actor-sessions="${fleet.hooksActor}"]) [data-event=hook_execution_start]`,
          ),
          /^hook_execution_start × 2 · claude-code, unmapped event$/,
        );
        // Events the mapping names and does not keep (the demo's prompts) are not "not understood".
        const notKept = all.data.flatMap((a: { unmapped_events: { reason: string }[] }) =>
          a.unmapped_events
        ).filter((e: { reason: string }) => e.reason === "not_kept");
        assert.ok(notKept.length > 0, "the demo sends events that are not kept");
        for (const event of new Set(notKept.map((e: { event_name: string }) => e.event_name))) {
          assert.equal(await page.$(`[data-event="${event}"]`), null, `${event} is listed`);
        }

        // Outdated: older than the newest version of the same agent in the organization.
        const versions = all.data.flatMap((a: { agents: { agent: string }[] }) => a.agents)
          .filter((r: { agent: string; agent_version: string }) =>
            r.agent === "claude-code" && r.agent_version !== ""
          ).map((r: { agent_version: string }) => r.agent_version);
        const newest = versions.reduce((a: string, b: string) =>
          b.localeCompare(a, "en", { numeric: true }) > 0 ? b : a
        );
        assert.notEqual(newest, "2.1.99");
        const marks = await page.$$eval(
          "li[data-agent=claude-code]",
          (items) =>
            items.map((li) => [li.getAttribute("data-version"), li.dataset.outdated ?? ""]),
        );
        assert.ok(marks.length > 1, JSON.stringify(marks));
        for (const [version, outdated] of marks) {
          const expected = version !== "" && version !== newest ? "true" : "";
          assert.deepEqual(outdated, expected, `claude-code ${version}`);
        }
        assert.deepEqual(await page.$$eval(`${oldRow} .badge.outdated`, (b) => b.length), 1);
        await axeCheck(page, "fleet");
        await page.screenshot({ path: `${SCREENSHOTS}/fleet.png` });

        // Silent for 7 days: the actors the API names, the old one still marked outdated.
        await page.$eval("input[name=silent_days]", (e) => (e as HTMLInputElement).value = "");
        await page.type("input[name=silent_days]", "7");
        await page.click("form.filters button[type=submit]");
        await page.waitForFunction(() => location.hash === "#/fleet?silent_days=7");
        await page.waitForFunction(() =>
          document.querySelector("[data-fleet=actors]")?.previousElementSibling?.textContent ===
            "Silent actors"
        );
        const silent = await api("/v1/fleet?silent_days=7");
        assert.deepEqual(await shownIds(), ids(silent));
        assert.ok(ids(silent).includes(fleet.oldActor));
        assert.ok(ids(silent).length < ids(all).length, "the filter kept every actor");
        assert.deepEqual(await page.$$eval(`${oldRow} .badge.outdated`, (b) => b.length), 1);

        // Nobody silent for ten years: the empty state; a refused value: the API's words.
        assert.deepEqual(ids(await api("/v1/fleet?silent_days=3650")), []);
        await page.goto(`${base}#/fleet?silent_days=3650`);
        await page.waitForFunction(() =>
          document.querySelector("main")?.textContent?.includes(
            "No actor has been silent for 3650 days.",
          )
        );
        const refused = await fetch(`${demo.queryUrl}/v1/fleet?silent_days=0`, {
          headers: { authorization: `Bearer ${demo.apiKey}` },
        });
        const { error } = await refused.json();
        assert.equal(refused.status, 400);
        await page.goto(`${base}#/fleet?silent_days=0`);
        await page.waitForSelector(".error-box");
        assert.equal(await text(page, ".error-box"), `${error.code}: ${error.message}`);

        // An actor links to its sessions.
        await page.goto(`${base}#/fleet?silent_days=7`);
        await page.waitForSelector(`${oldRow} [data-actor-sessions]`);
        await page.click(`${oldRow} [data-actor-sessions]`);
        await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Sessions");
        assert.deepEqual(
          await page.evaluate(() => location.hash),
          `#/sessions?actor=${fleet.oldActor}`,
        );
        await page.waitForSelector("tbody tr");
        const sessions = await api(`/v1/sessions?actor=${fleet.oldActor}&limit=50`);
        assert.deepEqual(
          sessions.data.map((s: { session_id: string }) => s.session_id),
          [fleet.session],
        );
        assert.deepEqual(
          await page.$$eval(
            "tbody tr td:nth-child(2) a",
            (a) => a.map((e) => e.getAttribute("title")),
          ),
          [fleet.session],
        );
      },
    );

    await t.step(
      "the overview's dimension selects hold this organization's values only; a value narrows every figure to its sessions and stays in the URL",
      async () => {
        const seeded = await addDimensions(demo);
        // Org B's values are in (its own key reads them), so their absence below means something.
        assert.deepEqual(await dimensionsOf(demo, seeded.otherKey), [
          ["department", ["finance-b"]],
          ["team.id", ["ledger-b"]],
        ]);
        assert.deepEqual(await dimensionsOf(demo, demo.apiKey), [
          ["department", ["engineering", "sales"]],
          ["team.id", ["platform", "web"]],
        ]);
        // Insights are answered from the replica: wait until it has the seeded sessions.
        await until(
          () => api("/v1/insights/activity?window=7d&dim.department=sales"),
          (body) => body.summary.total_calls === 1,
        );
        await until(
          () => api("/v1/insights/cost?window=7d&dim.department=engineering"),
          (body) => body.summary.call_count === 3,
        );

        await page.goto(`${base}#/overview`);
        await page.waitForSelector("[data-kpi=cost]");
        const selects = await page.$$eval(
          "form[aria-label='Overview filters'] select[data-dimension]",
          (all) =>
            all.map((s) => [
              s.getAttribute("data-dimension"),
              [...(s as HTMLSelectElement).options].map((o) => o.value),
            ]),
        );
        assert.deepEqual(selects, [
          ["department", ["", "engineering", "sales"]],
          ["team.id", ["", "platform", "web"]],
        ]);
        assert.deepEqual(
          await page.$$eval(
            "form[aria-label='Overview filters'] select[name=group_by] option",
            (o) => o.map((e) => (e as HTMLOptionElement).value),
          ),
          ["", "actor", "agent", "dim.department", "dim.team.id"],
        );

        // engineering: 3 + 2 calls, 1 error, 2 sessions; $0.30 + $0.20 reported and a
        // claude-haiku-4-5 call priced by the table (100 × $1 + 50 × $5 + 10 × $0.10 + 5 × $1.25
        // per million = $0.00035725), marked as estimated.
        await page.select("select[name='dim.department']", "engineering");
        await page.click("form[aria-label='Overview filters'] button[type=submit]");
        await page.waitForFunction(() => location.hash.includes("dim.department=engineering"));
        const engineering = {
          calls: "5",
          errors: "1",
          sessions: "2",
          cost: "$0.50 + ≈ $0.0004 est.",
          flags: "0",
        };
        await waitForKpis(page, engineering);
        assert.match(await text(page, "#coverage"), /the sessions with department = engineering;/);
        const before = browser.requests.length;
        await page.reload();
        await waitForKpis(page, engineering);
        // Every insight the overview asks for is narrowed alike, the panels below the fold too.
        await page.waitForFunction(() =>
          !document.querySelector("main")!.innerText.includes("Loading…")
        );
        const insights = browser.requests.slice(before).map((url) => new URL(url))
          .filter((url) => url.pathname.startsWith("/v1/insights/"));
        assert.deepEqual(
          insights.map((url) => url.pathname.slice("/v1/insights/".length)).sort(),
          ["activity", "cost", "domains", "outliers", "productivity", "risk", "top-tools"],
        );
        for (const url of insights) {
          assert.deepEqual(url.searchParams.getAll("dim.department"), ["engineering"], `${url}`);
        }
        assert.equal(
          await page.$eval("select[name='dim.department']", (s) => (s as HTMLSelectElement).value),
          "engineering",
        );
        await axeCheck(page, "overview (dimension filter)");

        // The figures link to the lists behind them, narrowed alike.
        await page.click("[data-kpi=calls]");
        await page.waitForFunction(() =>
          document.querySelector("h1")?.textContent === "Tool calls"
        );
        assert(
          (await page.evaluate(() => location.hash)).includes("dim.department=engineering"),
          "the list link lost the dimension",
        );
        await page.waitForSelector("tbody tr");
        const sessions = await page.$$eval(
          "tbody tr td:nth-child(7) a",
          (a) => a.map((e) => e.getAttribute("title")),
        );
        assert.deepEqual(
          [...sessions].sort(),
          [
            "ui-test-dims-platform",
            "ui-test-dims-platform",
            "ui-test-dims-platform",
            "ui-test-dims-web",
            "ui-test-dims-web",
          ],
        );
        assert.equal(
          await page.$eval("select[name='dim.department']", (s) => (s as HTMLSelectElement).value),
          "engineering",
        );

        // Another value: that value's figures.
        await page.goto(`${base}#/overview`);
        await page.waitForSelector("[data-kpi=cost]");
        await page.select("select[name='dim.department']", "sales");
        await page.click("form[aria-label='Overview filters'] button[type=submit]");
        await waitForKpis(page, {
          calls: "1",
          errors: "0",
          sessions: "1",
          cost: "$0.25",
          flags: "0",
        });
        assert.equal(
          await page.evaluate(() => location.hash),
          "#/overview?window=7d&granularity=daily&dim.department=sales",
        );

        // Risk, narrowed alike: none of the organization's flags is in sales' one session.
        assert.ok((await api("/v1/insights/risk?window=7d")).summary.total_flags > 0);
        await page.click("[data-kpi=flags]");
        await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Risk");
        assert.equal(
          await page.evaluate(() => location.hash),
          "#/risk?window=7d&granularity=daily&dim.department=sales",
        );
        assert.equal(await text(page, "[data-kpi=total_flags]"), "0");
        await page.waitForFunction(() =>
          document.querySelector("#scan-more")?.hasAttribute("disabled") === false
        );
        assert.match(await text(page, "main"), /0 flagged calls in the 1 most recent sessions/);
      },
    );

    await t.step(
      "group by shows one row per group with its figures, estimated cost marked",
      async () => {
        const rows = (name: string) => `[data-groups=${name}] tbody tr`;
        // Within engineering, by team: platform's 3 calls (1 error) and 2 model calls first.
        await openByHash(page, `${base}#/overview?dim.department=engineering`);
        await page.select("select[name=group_by]", "dim.team.id");
        await page.click("form[aria-label='Overview filters'] button[type=submit]");
        await page.waitForFunction(() => location.hash.includes("group_by=dim.team.id"));
        await waitForRows(page, rows("activity"), [
          ["platform", "3", "1", "1"],
          ["web", "2", "0", "1"],
        ]);
        await waitForRows(page, rows("cost"), [
          ["platform", "2", "200", "100", "$0.50"],
          ["web", "1", "100", "50", "≈ $0.0004 est."],
        ]);
        assert.equal(await text(page, "[data-groups=activity] h3"), "By team.id");
        // Every panel has its groups, the ones below the fold too.
        await page.waitForFunction(() =>
          !document.querySelector("main")!.innerText.includes("Loading…")
        );
        assert.deepEqual(
          await page.$$eval(
            "[data-groups]",
            (g) => g.map((e) => e.getAttribute("data-groups")).sort(),
          ),
          ["activity", "cost", "domains", "outliers", "productivity", "risk", "top-tools"],
        );
        await axeCheck(page, "overview (group by)");
        await page.screenshot({ path: `${SCREENSHOTS}/overview-dimensions.png`, fullPage: true });

        // By actor: the actors' names.
        await page.goto(`${base}#/overview?dim.department=engineering&group_by=actor`);
        await waitForRows(page, rows("activity"), [
          ["dims-laptop-1", "3", "1", "1"],
          ["dims-laptop-2", "2", "0", "1"],
        ]);

        // The whole organization by department: the sessions without one as "(none)", biggest
        // first; org B's finance-b nowhere.
        const byDepartment = await api("/v1/insights/activity?window=7d&group_by=dim.department");
        const none = byDepartment.groups.find((g: { value: string | null }) => g.value === null);
        assert.ok(none.summary.total_calls > 5, JSON.stringify(none));
        await page.goto(`${base}#/overview?group_by=dim.department`);
        await waitForRows(page, rows("activity"), [
          [
            "(none)",
            ...["total_calls", "error_count", "session_count"].map((f) =>
              numbers.format(none.summary[f])
            ),
          ],
          ["engineering", "5", "1", "2"],
          ["sales", "1", "0", "1"],
        ]);
        assert(!(await text(page, "main")).includes("finance-b"), "org B's value shows");

        // A group links to its sessions.
        await page.click(`[data-groups=activity] a[data-group=sales]`);
        await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Sessions");
        await page.waitForSelector("tbody tr");
        assert.deepEqual(
          await page.$$eval(
            "tbody tr td:nth-child(2) a",
            (a) => a.map((e) => e.getAttribute("title")),
          ),
          ["ui-test-dims-sales"],
        );
      },
    );

    await t.step("the dark scheme passes the accessibility check too", async () => {
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      await page.goto(`${base}#/overview`);
      await page.waitForSelector("[data-kpi=domains]");
      await axeCheck(page, "overview (dark)");
      await page.screenshot({ path: `${SCREENSHOTS}/overview-dark.png` });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    });

    await t.step("an API error is shown in the API's words", async () => {
      const response = await fetch(`${demo.queryUrl}/v1/tool-calls?outcome=maybe`, {
        headers: { authorization: `Bearer ${demo.apiKey}` },
      });
      const { error } = await response.json();
      assert.equal(response.status, 400);
      await page.goto(`${base}#/tool-calls?outcome=maybe`);
      await page.waitForSelector(".error-box");
      assert.equal(await text(page, ".error-box"), `${error.code}: ${error.message}`);
    });

    await t.step("a 401 later on sends the user back to the key prompt", async () => {
      await page.evaluate(
        (item) => sessionStorage.setItem(item, "wb_api_revoked000000000000000000000000000"),
        KEY_ITEM,
      );
      await page.goto(`${base}#/sessions`);
      await page.waitForSelector("#api-key");
      assert.deepEqual(
        await text(page, ".error-box"),
        "unauthenticated: invalid or missing Bearer credential",
      );
      assert.deepEqual(await storedKey(page), null);
    });

    await t.step("no request left 127.0.0.1, nothing broke the CSP, no script error", () => {
      assert.ok(browser.requests.length > 20, `${browser.requests.length} is not above 20`);
      assert.deepEqual(offLoopback(browser.requests), []);
      assert.deepEqual(cspViolations, []);
      assert.deepEqual(pageErrors, []);
    });
  });
}

async function text(page: Page, selector: string): Promise<string> {
  return (await page.$eval(selector, (e) => (e as HTMLElement).innerText)).trim();
}

function storedKey(page: Page): Promise<string | null> {
  return page.evaluate((item) => sessionStorage.getItem(item), KEY_ITEM);
}

/** Runs axe-core in the page; fails on any serious or critical violation. */
async function axeCheck(page: Page, view: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const result = await (globalThis as any).axe.run(document, { resultTypes: ["violations"] });
    // deno-lint-ignore no-explicit-any
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.slice(0, 3).map((n: { target: string[] }) => n.target.join(" ")),
    }));
  });
  const serious = violations.filter((v: { impact: string }) =>
    v.impact === "serious" || v.impact === "critical"
  );
  assert.deepEqual(serious, [], `${view}: ${JSON.stringify(serious)}`);
}

/**
 * Opens `url`, a new hash of the page already open, and waits until the dashboard has rendered
 * it: the elements of the view shown before are gone.
 */
async function openByHash(page: Page, url: string): Promise<void> {
  const renders = () =>
    page.evaluate(() =>
      performance.getEntriesByType("mark").filter((m) => m.name.startsWith("rendered:")).length
    );
  const before = await renders();
  await page.goto(url);
  await page.waitForFunction(
    (before) =>
      performance.getEntriesByType("mark").filter((m) => m.name.startsWith("rendered:")).length >
        before,
    {},
    before,
  );
}

/** Waits until the overview's headline figures read `expected` (a new render replaces the old). */
async function waitForKpis(page: Page, expected: Record<string, string>): Promise<void> {
  const read = (ids: string[]) =>
    page.evaluate(
      (ids) =>
        Object.fromEntries(
          ids.map((id) => [
            id,
            (document.querySelector(`[data-kpi=${id}]`) as HTMLElement | null)?.innerText.trim(),
          ]),
        ),
      ids,
    );
  const ids = Object.keys(expected);
  await page.waitForFunction(
    (expected) =>
      Object.entries(expected).every(([id, value]) =>
        (document.querySelector(`[data-kpi=${id}]`) as HTMLElement | null)?.innerText.trim() ===
          value
      ),
    { timeout: 15_000 },
    expected,
  ).catch(() => {});
  assert.deepEqual(await read(ids), expected);
}

/** Waits until the rows under `selector` read `expected`, cell by cell, then asserts it. */
async function waitForRows(page: Page, selector: string, expected: string[][]): Promise<void> {
  const read = () =>
    page.$$eval(
      selector,
      (rows) =>
        rows.map((row) =>
          [...(row as HTMLTableRowElement).cells].map((cell) => cell.innerText.trim())
        ),
    );
  const deadline = Date.now() + 15_000;
  let shown = await read();
  while (JSON.stringify(shown) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    shown = await read();
  }
  assert.deepEqual(shown, expected, selector);
}

/** Calls `read` until `done` holds of its answer (at most 30 s); returns that answer. */
// deno-lint-ignore no-explicit-any
async function until(read: () => Promise<any>, done: (body: any) => boolean): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const body = await read();
    if (done(body) || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `GET /v1/dimensions` with `key`, as `[key, values]` pairs. */
async function dimensionsOf(demo: Demo, key: string): Promise<[string, string[]][]> {
  const response = await fetch(`${demo.queryUrl}/v1/dimensions`, {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(response.status, 200);
  const { data } = await response.json();
  return data.map((d: { key: string; values: string[] }) => [d.key, d.values]);
}

interface Demo extends AsyncDisposable {
  queryUrl: string;
  ingestUrl: string;
  apiKey: string;
  dir: string;
}

/** `demo` as a user runs it, on ephemeral ports, until its API key is printed. */
async function startDemo(): Promise<Demo> {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-ui-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      `${ROOT}main.ts`,
      "demo",
      "--data",
      `${dir}/data`,
      "--days",
      "7",
      "--actors",
      "4",
      "--listen",
      "127.0.0.1:0",
      "--ingest-listen",
      "127.0.0.1:0",
      "--grpc-listen",
      "127.0.0.1:0",
      "--log-level",
      "warn",
    ],
    stdout: "piped",
    stderr: "inherit",
    env: { NO_COLOR: "1" },
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const found = () => /Demo API key: (wb_api_\w+)/.exec(seen);
  const deadline = setTimeout(() => child.kill("SIGKILL"), 180_000);
  // The key comes first; the demo's data is all in once it says how to stop it.
  while (!/Press Ctrl-C/.test(seen)) {
    const { value, done } = await lines.read();
    if (done) break;
    seen += value;
  }
  clearTimeout(deadline);
  const drain = (async () => {
    while (!(await lines.read()).done) { /* the demo's further output */ }
  })();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await drain;
    await Deno.remove(dir, { recursive: true });
  };
  const key = found();
  if (!key) {
    await stop();
    throw new Error(`The demo printed no API key:\n${seen}`);
  }
  return {
    queryUrl: /query API listening on (http:\/\/\S+)/.exec(seen)![1]!,
    ingestUrl: /OTLP ingest listening on (http:\/\/\S+)/.exec(seen)![1]!,
    apiKey: key[1]!,
    dir: `${dir}/data`,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * Fleet data (issue #33): in the demo's organization, an actor whose one session ran Claude Code
 * 2.1.99 (older than 2.1.240, though it sorts after it as text) ten days ago, and one that sent two
 * events the server does not keep a minute ago; a second organization whose actor runs a newer
 * Claude Code now.
 */
async function addFleet(
  demo: Demo,
): Promise<{ oldActor: string; hooksActor: string; session: string; theirs: string }> {
  const org = (await cli(demo, "org", "list")).orgs[0].id;
  const old = await cli(demo, "actor", "create", "--org", org, "--name", "fleet-old-laptop");
  const hooks = await cli(demo, "actor", "create", "--org", org, "--name", "fleet-hooks-laptop");
  const other = await cli(demo, "org", "create", "--name", "other-org");
  const theirs = await cli(
    demo,
    "actor",
    "create",
    "--org",
    other.id,
    "--name",
    "other-org-laptop",
  );
  const session = "ui-test-fleet-old";
  const then = Date.now() - 10 * 86_400_000;
  const call = (session: string, id: string, timeMs: number, version: string) =>
    claudeEvent("tool_result", timeMs, {
      "session.id": session,
      "tool_name": "Bash",
      "tool_use_id": id,
      "success": "true",
      "duration_ms": "25",
      "app.version": version,
    });
  const send = async (ingestKey: string, records: unknown[]) => {
    const response = await fetch(`${demo.ingestUrl}/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ingestKey}` },
      body: JSON.stringify(claudeExport(records)),
    });
    assert.deepEqual(response.status, 200, await response.text());
  };
  await send(old.ingest_key, [call(session, "toolu_old", then, "2.1.99")]);
  // Records that store nothing count when they arrive (docs/api.md §4.19), so another actor.
  const now = Date.now() - 60_000;
  await send(hooks.ingest_key, [
    call("ui-test-fleet-hooks", "toolu_hooks", now, "2.1.240"),
    claudeEvent("hook_execution_start", now + 1000, { "session.id": "ui-test-fleet-hooks" }),
    claudeEvent("hook_execution_start", now + 2000, { "session.id": "ui-test-fleet-hooks" }),
  ]);
  await send(theirs.ingest_key, [
    call("ui-test-other-org", "toolu_theirs", Date.now() - 60_000, "9.9.9"),
  ]);
  return {
    oldActor: old.actor_id,
    hooksActor: hooks.actor_id,
    session,
    theirs: theirs.actor_id,
  };
}

/** Runs an admin command of the CLI on the demo's data directory and returns its JSON. */
// deno-lint-ignore no-explicit-any
async function cli(demo: Demo, ...args: string[]): Promise<any> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", `${ROOT}main.ts`, ...args, "--data", demo.dir, "--json"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(output.success, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

/**
 * Sends, as a new actor, a session whose second call holds a GitHub token in a command that also
 * deletes recursively: a credential flag, a destructive flag and a redaction marker.
 */
async function addLeakyCall(demo: Demo): Promise<{ session: string; callId: string }> {
  const org = (await cli(demo, "org", "list")).orgs[0].id;
  const actor = await cli(demo, "actor", "create", "--org", org, "--name", "leaky-laptop");
  const session = "ui-test-leaky-session";
  const now = Date.now() - 60_000;
  const command =
    `curl -H "Authorization: token ${SECRET}" https://api.github.com/user && rm -rf build`;
  const call = (id: string, tool: string, at: number, input: unknown, more = {}) =>
    toolResult({ session, id, tool, timeMs: now + at, input, ...more });
  const records = [
    call("toolu_1", "Read", 0, { file_path: "README.md" }, { durationMs: 12 }),
    call("toolu_2", "Grep", 1500, { pattern: "GITHUB_TOKEN" }, { durationMs: 340 }),
    call("toolu_leak", "Bash", 4000, { command }, { durationMs: 2300 }),
    call("toolu_4", "WebFetch", 7500, { url: "https://docs.github.com/en/rest" }, {
      durationMs: 1800,
    }),
    call("toolu_5", "Edit", 10_000, { file_path: "src/app.ts" }, { durationMs: 40 }),
    call("toolu_6", "Bash", 11_000, { command: "npm test" }, {
      durationMs: 4100,
      success: false,
      error: "Exit code 1",
    }),
    toolDecision({
      session,
      id: "toolu_7",
      tool: "Bash",
      timeMs: now + 16_000,
      decision: "reject",
    }),
    call("toolu_8", "Edit", 18_000, { file_path: "src/app.ts" }, { durationMs: 35 }),
    call("toolu_9", "Bash", 19_000, { command: "npm test" }, { durationMs: 3800 }),
    // Its model calls: one that reports its cost, two that do not (one priced, one unknown).
    apiRequest({
      session,
      timeMs: now + 500,
      model: "claude-sonnet-4-5",
      costUsd: 0.0421,
      requestId: "req_1",
      tokens: { input: 1200, output: 340, cacheRead: 8000, cacheCreation: 150 },
    }),
    apiRequest({
      session,
      timeMs: now + 9000,
      model: "claude-haiku-4-5",
      requestId: "req_2",
      durationMs: null,
    }),
    apiRequest({
      session,
      timeMs: now + 10_000,
      model: "in-house-model",
      requestId: "req_3",
      durationMs: null,
    }),
  ];
  const response = await fetch(`${demo.ingestUrl}/v1/logs`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${actor.ingest_key}` },
    body: JSON.stringify(claudeExport(records)),
  });
  assert.deepEqual(response.status, 200, await response.text());
  const page =
    await (await fetch(`${demo.queryUrl}/v1/tool-calls?session_id=${session}&tool_name=Bash`, {
      headers: { authorization: `Bearer ${demo.apiKey}` },
    })).json();
  const leak = page.data.find((c: { timestamp: string }) => Date.parse(c.timestamp) === now + 4000);
  assert(leak, "the leaky call was not stored");
  return { session, callId: leak.id };
}

/**
 * Dimension data (issue #33). In the demo's organization, whose own sessions report no
 * dimensions, three sessions of two new actors:
 * - `ui-test-dims-platform` (dims-laptop-1; department engineering, team.id platform): 3 tool
 *   calls, 1 failed; 2 model calls reporting $0.30 and $0.20 (100 input, 50 output tokens each);
 * - `ui-test-dims-web` (dims-laptop-2; engineering, web): 2 tool calls; a claude-haiku-4-5 call
 *   reporting no cost (estimated);
 * - `ui-test-dims-sales` (dims-laptop-1; sales, no team): 1 tool call; a model call of $0.25.
 * In a new organization, one session with department finance-b and team.id ledger-b, and an API
 * key of that organization.
 */
async function addDimensions(demo: Demo): Promise<{ otherKey: string }> {
  const org = (await cli(demo, "org", "list")).orgs
    .find((o: { name: string }) => o.name === "Demo").id;
  const first = await cli(demo, "actor", "create", "--org", org, "--name", "dims-laptop-1");
  const second = await cli(demo, "actor", "create", "--org", org, "--name", "dims-laptop-2");
  const other = await cli(demo, "org", "create", "--name", "dims-org-b");
  const otherActor = await cli(demo, "actor", "create", "--org", other.id, "--name", "b-laptop");
  const member = await cli(demo, "member", "add", "--org", other.id, "--email", "b@example.com");
  const otherKey = (await cli(demo, "key", "create", "--org", other.id, "--member", member.id)).key;
  const now = Date.now() - 5 * 60_000;
  const calls = (session: string, outcomes: boolean[]) =>
    outcomes.map((success, i) =>
      toolResult({
        session,
        id: `${session}-${i}`,
        tool: success ? "Read" : "Bash",
        timeMs: now + i * 1000,
        success,
        input: success ? { file_path: "README.md" } : { command: "npm test" },
        error: success ? undefined : "Exit code 1",
      })
    );
  const model = (session: string, i: number, model: string, costUsd?: number) =>
    apiRequest({
      session,
      timeMs: now + 500 + i * 1000,
      model,
      costUsd,
      requestId: `${session}-r${i}`,
    });
  const send = async (ingestKey: string, records: unknown[], dims: Record<string, string>) => {
    const response = await fetch(`${demo.ingestUrl}/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ingestKey}` },
      body: JSON.stringify(claudeExport(records, "claude-code", dims)),
    });
    assert.deepEqual(response.status, 200, await response.text());
  };
  const platform = "ui-test-dims-platform";
  await send(first.ingest_key, [
    ...calls(platform, [true, false, true]),
    model(platform, 0, "claude-sonnet-4-5", 0.3),
    model(platform, 1, "claude-sonnet-4-5", 0.2),
  ], { department: "engineering", "team.id": "platform" });
  const web = "ui-test-dims-web";
  await send(second.ingest_key, [
    ...calls(web, [true, true]),
    model(web, 0, "claude-haiku-4-5"),
  ], { department: "engineering", "team.id": "web" });
  const sales = "ui-test-dims-sales";
  await send(first.ingest_key, [
    ...calls(sales, [true]),
    model(sales, 0, "claude-sonnet-4-5", 0.25),
  ], { department: "sales" });
  const theirs = "ui-test-dims-org-b";
  await send(otherActor.ingest_key, [
    ...calls(theirs, [true, false]),
    model(theirs, 0, "claude-sonnet-4-5", 1),
  ], { department: "finance-b", "team.id": "ledger-b" });
  return { otherKey };
}

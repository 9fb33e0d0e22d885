/**
 * `deploy/prometheus/alerts.yml` (issue #34): its rules name only metrics a
 * real server exposes after ingest, its refusal rules cover every status of
 * the refusal table, every rule has firing and quiet cases in
 * `alerts_test.yml`, and `promtool` (Debian's `prometheus` package) checks the
 * rules and runs those cases when it is installed.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { REFUSALS } from "../src/server/otlp_export.ts";
import { startTestServer } from "./_harness.ts";
import { apiRequest, claudeEvent, claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const DIR = new URL("../deploy/prometheus/", import.meta.url).pathname;
const RULES = `${DIR}alerts.yml`;
const CASES = `${DIR}alerts_test.yml`;

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

interface RuleCases {
  "rule_files": string[];
  tests: {
    input_series: { series: string; values: string }[];
    alert_rule_test: { alertname: string; exp_alerts: unknown[] }[];
  }[];
}

async function rules(): Promise<Rule[]> {
  const file = parse(await Deno.readTextFile(RULES)) as RuleFile;
  return file.groups.flatMap((group) => group.rules);
}

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "offset",
  "bool",
  "inf",
  "nan",
  "atan2",
]);

/**
 * The metric names a PromQL expression selects: identifiers outside strings,
 * label matchers, ranges and grouping clauses that are not followed by `(`
 * (a function or an aggregation) and are not keywords, numbers or durations.
 */
export function metricNames(expr: string): Set<string> {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const match of bare.matchAll(/\d+(?:\.\d+)?(?:e[+-]?\d+)?[a-z]*|[a-zA-Z_:][\w:]*/g)) {
    const token = match[0];
    if (/^\d/.test(token) || KEYWORDS.has(token.toLowerCase())) continue;
    if (/^\s*\(/.test(bare.slice(match.index! + token.length))) continue;
    names.add(token);
  }
  return names;
}

/** The metric names of the samples in a Prometheus text exposition. */
function exposedNames(text: string): Set<string> {
  return new Set(
    text.split("\n").filter((line) => line !== "" && !line.startsWith("#"))
      .map((line) => /^[a-zA-Z_:][\w:]*/.exec(line)![0]),
  );
}

/** Names in `exprs` that are not in `exposed`, each with the first expression naming it. */
function unexposed(exprs: readonly string[], exposed: Set<string>): Map<string, string> {
  const missing = new Map<string, string>();
  for (const expr of exprs) {
    for (const name of metricNames(expr)) {
      if (!exposed.has(name) && !missing.has(name)) missing.set(name, expr);
    }
  }
  return missing;
}

/**
 * A scrape of a real server after ingest that gives every series a sample:
 * stored calls with each risk flag, an error and cost, an unusable record, a
 * refused export, with `--max-disk-bytes`.
 */
async function scrapeAfterIngest(): Promise<string> {
  await using server = await startTestServer({ flags: { maxDiskBytes: "1000000000" } });
  const org = await server.createOrg();
  const session = "alerts";
  const logs = claudeExport([
    toolResult({
      session,
      id: "rm",
      tool: "Bash",
      timeMs: T0,
      input: { command: "rm -rf /srv/app" },
    }),
    toolResult({
      session,
      id: "fail",
      tool: "Bash",
      timeMs: T0 + 1,
      success: false,
      error: "Exit code 1",
    }),
    apiRequest({
      session,
      timeMs: T0 + 2,
      model: "claude-sonnet-4-5",
      costUsd: 0.5,
      requestId: "r",
    }),
    // No session: unusable, skipped and counted as rejected.
    claudeEvent("tool_result", T0 + 3, { "tool_name": "Bash", "tool_use_id": "no-session" }),
  ]);
  const stored = await server.ingest("/v1/logs", logs, org.ingestKey);
  assert.equal(stored.status, 200, await stored.text());
  const refused = await server.ingest("/v1/logs", logs, "wb_ingest_not-a-key");
  assert.equal(refused.status, 401, await refused.text());
  const response = await fetch(`${server.ingestUrl}/metrics`);
  assert.equal(response.status, 200);
  return await response.text();
}

Deno.test("the PromQL name reader finds metric names and nothing else", () => {
  const cases: [string, string[]][] = [
    ["sum by (org) (increase(agent_telemetry_model_cost_usd_total[1d])) > 100", [
      "agent_telemetry_model_cost_usd_total",
    ]],
    [
      "time() - max by (org) (max_over_time(a_timestamp_seconds[7d] offset 1h)) > 72 * 3600",
      ["a_timestamp_seconds"],
    ],
    ['bytes{file="telemetry"} > ignoring(file) 0.9 * cap_bytes', ["bytes", "cap_bytes"]],
    [
      'sum(rate(requests_total{route=~"/v1/(logs)|other_total", status!~`2..`}[5m])) by (instance)' +
      " / on(instance) group_left sum(rate(requests_total[5m])) > 1e-3",
      ["requests_total"],
    ],
    ["up == 0 unless on(job) absent(other_metric)", ["other_metric", "up"]],
  ];
  for (const [expr, names] of cases) assert.deepEqual([...metricNames(expr)].sort(), names, expr);
});

Deno.test("a rule naming a metric the server does not expose fails the check", () => {
  const exposed = exposedNames(
    '# TYPE agent_telemetry_x_total counter\nagent_telemetry_x_total{org="o"} 1\n',
  );
  assert.deepEqual([...unexposed(["rate(agent_telemetry_x_total[5m]) > 0"], exposed)], []);
  assert.deepEqual(
    [...unexposed(["rate(agent_telemetry_x_totl[5m]) > 0"], exposed).keys()],
    ["agent_telemetry_x_totl"],
  );
  // A name only declared (# TYPE, no sample) is no series Prometheus can select.
  assert.deepEqual(
    [
      ...unexposed(["agent_telemetry_y > 0"], exposedNames("# TYPE agent_telemetry_y gauge\n"))
        .keys(),
    ],
    ["agent_telemetry_y"],
  );
});

Deno.test("every metric in alerts.yml, its test series and README is in a real server's /metrics", async () => {
  const exposed = exposedNames(await scrapeAfterIngest());
  const all = await rules();
  assert.ok(all.length >= 8, `${all.length} rules`);
  for (const rule of all) {
    assert.ok(metricNames(rule.expr).size > 0, `${rule.alert} names no metric`);
  }
  const missing = unexposed(all.map((rule) => rule.expr), exposed);
  assert.deepEqual(Object.fromEntries(missing), {}, "rules naming metrics /metrics lacks");
  const cases = parse(await Deno.readTextFile(CASES)) as RuleCases;
  const series = cases.tests.flatMap((test) => test.input_series.map((input) => input.series));
  const missingSeries = unexposed(series, exposed);
  assert.deepEqual(Object.fromEntries(missingSeries), {}, "test series /metrics lacks");
  // README's Operations section names the same series.
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const operations = readme.slice(readme.indexOf("## Operations"), readme.indexOf("## Security"));
  const named = [...operations.matchAll(/\bagent_telemetry_\w+/g)].map((match) => match[0]);
  assert.ok(named.length >= 5, "README names the per-organization series");
  assert.deepEqual(named.filter((name) => !exposed.has(name)), [], "README names /metrics lacks");
});

Deno.test("every rule in alerts.yml has a firing and a quiet case in alerts_test.yml", async () => {
  const all = await rules();
  const names = all.map((rule) => rule.alert);
  assert.equal(new Set(names).size, names.length, "alert names are unique");
  for (const rule of all) {
    assert.match(rule.labels?.severity ?? "", /^(warning|critical)$/, rule.alert);
    assert.ok(rule.annotations?.summary && rule.annotations.description, rule.alert);
  }
  const cases = parse(await Deno.readTextFile(CASES)) as RuleCases;
  assert.deepEqual(cases.rule_files, ["alerts.yml"]);
  const checks = cases.tests.flatMap((test) => test.alert_rule_test);
  for (const check of checks) assert.ok(names.includes(check.alertname), check.alertname);
  for (const name of names) {
    const mine = checks.filter((check) => check.alertname === name);
    assert.ok(mine.some((check) => check.exp_alerts.length > 0), `${name}: no firing case`);
    assert.ok(mine.some((check) => check.exp_alerts.length === 0), `${name}: no quiet case`);
  }
});

Deno.test("the ingest refusal rules cover every status of the refusal table", async () => {
  const all = await rules();
  /** The `status=~` pattern of a rule, anchored as Prometheus anchors it. */
  const statusPattern = (alert: string) => {
    const rule = all.find((r) => r.alert === alert);
    const pattern = rule && /status=~"([^"]+)"/.exec(rule.expr)?.[1];
    assert.ok(pattern, `${alert} has a status=~ matcher`);
    return new RegExp(`^(?:${pattern})$`);
  };
  const retryable = statusPattern("AgentTelemetryIngestUnavailable");
  const permanent = statusPattern("AgentTelemetryExportsRefused");
  for (const [refusal, answer] of Object.entries(REFUSALS)) {
    // A refusal a retry may cure is the unavailable rule's; any other the refused rule's.
    const [mine, other] = answer.retryAfterSeconds === undefined
      ? [permanent, retryable]
      : [retryable, permanent];
    for (const status of [String(answer.http), answer.grpc]) {
      assert.match(status, mine, `${refusal}: ${status}`);
      assert.doesNotMatch(status, other, `${refusal}: ${status} in both rules`);
    }
  }
  for (const accepted of ["200", "OK"]) {
    assert.doesNotMatch(accepted, retryable);
    assert.doesNotMatch(accepted, permanent);
  }
});

/** Whether `promtool` runs here (Debian: `apt-get install prometheus`). */
async function hasPromtool(): Promise<boolean> {
  try {
    return (await new Deno.Command("promtool", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output()).success;
  } catch {
    return false;
  }
}

const promtool = await hasPromtool();

async function runPromtool(...args: string[]): Promise<void> {
  const out = await new Deno.Command("promtool", { args, cwd: DIR }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `promtool ${args.join(" ")}:\n${text}`);
}

Deno.test({
  name: "promtool checks alerts.yml and passes every case of alerts_test.yml",
  ignore: !promtool,
  async fn() {
    await runPromtool("check", "rules", "alerts.yml");
    await runPromtool("test", "rules", "alerts_test.yml");
  },
});

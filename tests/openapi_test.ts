/**
 * The query API's OpenAPI document (issue #34): served at `/v1/openapi.json`
 * without a key; valid OpenAPI 3.1 (the official schema, through
 * `@seriousme/openapi-schema-validator`) whose every schema compiles under
 * Ajv's strict JSON Schema 2020-12; committed as `docs/openapi.json`;
 * naming every route the router serves and every parameter of the spec and
 * README; and true of real answers: every endpoint's successes and errors
 * (400, 401, 404, 501, 503), over the scenario, recorded runs of the real
 * agents and a GenAI span, match their operation's documented response (an
 * NDJSON export as the array of its lines), and each documented field is
 * seen in one.
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { loadScenario, send } from "./_scenario.ts";
import { claudeExport, genAiToolSpan, toolResult } from "./_otlp.ts";
import { replayRecordedJson } from "./_recorded_json.ts";
import { OPENAPI_FILE, openApiFileText } from "../scripts/openapi.ts";
import type { KeyVerifier } from "../src/store/stores.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const OPENAPI_PATH = "/v1/openapi.json";

/** The media type of the exports: one JSON value per line. */
const NDJSON = "application/x-ndjson";

/** The paths answered outside the router, without a key. */
const OPEN_PATHS = ["/healthz", "/readyz", OPENAPI_PATH];

async function servedDocument(server: TestServer): Promise<Json> {
  const response = await server.get("/v1/openapi.json");
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  return await response.json();
}

/** `/v1/sessions/:id` as the document writes it. */
const documented = (pattern: string) => pattern.replace(/:(\w+)/g, "{$1}");

const BASE = "https://openapi.test/document";

/**
 * Validates bodies against the document's response schemas with Ajv
 * (strict, JSON Schema 2020-12, formats checked): the components are one
 * schema's `$defs`, and each response schema refers to them there.
 */
class ResponseValidator {
  readonly #ajv = new Ajv2020({ strict: true, allErrors: true });
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: Json) {
    addFormats.default(this.#ajv);
    this.#ajv.addSchema({ $id: BASE, $defs: rebased(document.components.schemas) });
  }

  /** Compiles every component: a schema Ajv refuses in strict mode throws. */
  compileAll(): void {
    for (const id of Object.keys(this.document.components.schemas)) {
      this.#ajv.compile({ $ref: `${BASE}#/$defs/${id}` });
    }
  }

  /** The operation's response of `status`, or undefined when it documents none. */
  response(path: string, status: number): Json | undefined {
    return this.document.paths[path]?.get?.responses?.[String(status)];
  }

  /** Problems of `body` as the answer `status` of `GET path`: none when it is as documented. */
  problems(path: string, status: number, contentType: string | null, body: unknown): string[] {
    const response = this.response(path, status);
    if (response === undefined) return [`${status} is not documented for GET ${path}`];
    const media = Object.keys(response.content ?? {});
    if (!media.includes(contentType ?? "")) {
      return [`content type ${contentType} is not documented (${media.join(", ")})`];
    }
    const key = `${path} ${status}`;
    let validate = this.#compiled.get(key);
    if (validate === undefined) {
      validate = this.#ajv.compile(rebased(response.content[contentType!].schema));
      this.#compiled.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) =>
      `${error.instancePath || "/"} ${error.message} ${JSON.stringify(error.params)}`
    );
  }
}

/** `schema` with its component references pointing at the validator's bundle. */
function rebased(schema: unknown): Json {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${BASE}#/$defs/`),
  );
}

Deno.test("GET /v1/openapi.json serves, without a key, a valid OpenAPI 3.1 document", async (t) => {
  await using server = await startTestServer();
  const document = await servedDocument(server);
  await t.step("the OpenAPI 3.1 schema accepts it", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    assert.equal(validator.version, "3.1");
  });
  await t.step("every schema in it compiles under Ajv's strict 2020-12 mode", () => {
    const validator = new ResponseValidator(document);
    validator.compileAll();
    const ajv = new Ajv2020({ strict: true });
    addFormats.default(ajv);
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const parameter of item.get.parameters ?? []) {
        assert.doesNotThrow(() => ajv.compile(parameter.schema), `${path} ${parameter.name}`);
      }
    }
  });
  await t.step("the schema refuses a document that lacks what OpenAPI requires", async () => {
    const { info: _, ...withoutInfo } = document;
    assert.equal((await new Validator().validate(withoutInfo)).valid, false);
    const badResponse = structuredClone(document);
    badResponse.paths["/v1/ping"].get.responses["200"] = { content: {} };
    assert.equal((await new Validator().validate(badResponse)).valid, false);
  });
  await t.step("a key, even a bad one, changes nothing", async () => {
    const response = await server.get("/v1/openapi.json", "wb_api_not_a_key");
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), document);
  });
  for (const method of ["POST", "HEAD", "DELETE"]) {
    await t.step(`${method} is 405 text, as on every other path`, async () => {
      const response = await server.get("/v1/openapi.json", undefined, { method });
      assert.equal(response.status, 405);
      assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
      await response.body?.cancel();
    });
  }
  await t.step("a path below it is 404 text", async () => {
    const response = await server.get("/v1/openapi.json/x");
    assert.equal(response.status, 404);
    assert.equal(await response.text(), "404 page not found");
  });
});

Deno.test("docs/openapi.json is the document the server serves (deno task openapi)", async () => {
  await using server = await startTestServer();
  const served = openApiFileText(await servedDocument(server));
  const committed = await Deno.readTextFile(OPENAPI_FILE);
  assert.ok(
    committed === served,
    "docs/openapi.json differs from GET /v1/openapi.json: run `deno task openapi` and commit it",
  );
});

Deno.test("the document has a path for every route the router serves, and only those", async (t) => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const document = await servedDocument(server);
  const routes = server.server.queryRoutes;
  assert.ok(routes.length >= 15, "the router's routes");
  const paths = Object.keys(document.paths);
  const missing = [...routes.map(documented), ...OPEN_PATHS].filter((p) => !paths.includes(p));
  assert.deepEqual(missing, [], "routes the document lacks");
  const extra = paths.filter((path) =>
    !OPEN_PATHS.includes(path) && !routes.map(documented).includes(path)
  );
  assert.deepEqual(extra, [], "paths the router does not serve");
  for (const path of paths) {
    await t.step(`GET ${path} is served`, async () => {
      const response = await server.get(path.replace(/\{\w+\}/g, "x"), org.apiKey);
      const text = await response.text();
      assert.notEqual(text, "404 page not found", path);
      assert.equal(Object.keys(document.paths[path]).join(), "get", "GET only");
    });
  }
});

/** The query parameters of docs/api.md §4 and README's extensions, by path. */
const SPEC_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  "/v1/ping": [],
  "/v1/sessions": [
    "limit",
    "cursor",
    "after",
    "before",
    "agent",
    "actor",
    "team",
    "domain",
    "tag",
    "repository",
    "dim.<key>",
  ],
  "/v1/sessions/facets": [],
  "/v1/sessions/{id}": ["id"],
  "/v1/tool-calls": [
    "limit",
    "cursor",
    "after",
    "before",
    "session_id",
    "actor",
    "team",
    "tool_name",
    "tool_type",
    "category",
    "outcome",
    "success",
    "repository",
    "dim.<key>",
  ],
  "/v1/tool-calls/facets": [],
  "/v1/tool-calls/{id}": ["id"],
  "/v1/unmapped-events": ["actor"],
  "/v1/fleet": ["silent_days"],
  "/v1/dimensions": [],
  "/v1/export/tool-calls": [
    "after",
    "before",
    "session_id",
    "actor",
    "team",
    "tool_name",
    "tool_type",
    "category",
    "outcome",
    "success",
    "repository",
    "dim.<key>",
    "after_id",
  ],
  "/v1/export/sessions": [
    "after",
    "before",
    "agent",
    "actor",
    "team",
    "domain",
    "repository",
    "dim.<key>",
    "after_id",
  ],
  "/v1/insights/activity": ["window", "granularity", "repository", "dim.<key>", "group_by"],
  "/v1/insights/top-tools": ["window", "granularity", "repository", "dim.<key>", "group_by"],
  "/v1/insights/outliers": ["window", "granularity", "repository", "dim.<key>", "group_by"],
  "/v1/insights/cost": ["window", "granularity", "repository", "dim.<key>", "group_by"],
  "/v1/insights/risk": ["window", "granularity", "repository", "dim.<key>", "group_by"],
  "/v1/insights/domains": ["window", "granularity", "repository", "dim.<key>", "group_by"],
  "/v1/insights/productivity": [
    "window",
    "granularity",
    "actor",
    "team",
    "repository",
    "dim.<key>",
    "group_by",
  ],
  "/healthz": [],
  "/readyz": [],
  "/v1/openapi.json": [],
};

Deno.test("the document names every parameter of the spec and README, with its bounds and defaults", async () => {
  await using server = await startTestServer();
  const document = await servedDocument(server);
  const names = Object.fromEntries(
    Object.entries<Json>(document.paths).map((
      [path, item],
    ) => [path, (item.get.parameters ?? []).map((p: Json) => p.name).sort()]),
  );
  assert.deepEqual(
    names,
    Object.fromEntries(
      Object.entries(SPEC_PARAMETERS).map(([path, list]) => [path, [...list].sort()]),
    ),
  );
  const parameter = (path: string, name: string) =>
    document.paths[path].get.parameters.find((p: Json) => p.name === name);
  assert.deepEqual(parameter("/v1/sessions", "limit").schema, {
    type: "integer",
    minimum: 1,
    maximum: 500,
    default: 50,
  });
  assert.deepEqual(parameter("/v1/insights/cost", "window").schema.enum, ["7d", "30d", "90d"]);
  assert.equal(parameter("/v1/insights/cost", "window").schema.default, "7d");
  assert.equal(parameter("/v1/insights/cost", "granularity").schema.default, "daily");
  assert.deepEqual(parameter("/v1/tool-calls", "outcome").schema.enum, ["ok", "error", "rejected"]);
  assert.equal(parameter("/v1/tool-calls", "success").deprecated, true);
  assert.equal(parameter("/v1/tool-calls", "team").schema.type, "array");
  assert.equal(parameter("/v1/sessions/{id}", "id").required, true);
  assert.deepEqual(parameter("/v1/fleet", "silent_days").schema, {
    type: "integer",
    minimum: 1,
    maximum: 3650,
  });
  const exports = [
    ["/v1/export/tool-calls", "ExportedToolCall"],
    ["/v1/export/sessions", "ExportedSession"],
  ] as const;
  for (const [path, line] of exports) {
    assert.deepEqual(document.paths[path].get.responses["200"].content, {
      [NDJSON]: { schema: { type: "array", items: { $ref: `#/components/schemas/${line}` } } },
    });
  }
  for (const path of OPEN_PATHS) assert.deepEqual(document.paths[path].get.security, []);
  assert.deepEqual(document.security, [{ apiKey: [] }]);
});

/** One request of the conformance run. */
interface Case {
  /** The documented path it exercises. */
  path: string;
  url: string;
  key: string | undefined;
  status: number;
}

/** A GenAI `execute_tool` span that reports what the agents' logs leave out (trace ids, description, provider). */
function genAiSpan(timeMs: number) {
  return genAiToolSpan({
    timeMs,
    attributes: {
      "gen_ai.tool.description": "Deploys the app",
      "gen_ai.tool.call.arguments": JSON.stringify({ target: "staging" }),
      "gen_ai.tool.call.result": "deploy failed",
      "gen_ai.provider.name": "openai",
      "gen_ai.agent.name": "deployer",
      "gen_ai.request.model": "gpt-5",
      "error.type": "DeployError",
    },
    status: { code: 2, message: "deploy failed: quota" },
  });
}

/**
 * Loads the data set: the scenario, four recorded real runs, a GenAI span, a
 * session of many calls (an outlier) and an actor that never sent (the fleet's
 * `last_seen` null).
 */
async function loadData(server: TestServer): Promise<TestOrg> {
  const { org } = await loadScenario(server);
  const keys = await server.keyStore();
  await keys.createActor(org.orgId, "idle");
  await keys.close();
  const end = Date.now() - 60_000;
  await send(
    server,
    org.ingestKey,
    Array.from(
      { length: 40 },
      (_, i) =>
        toolResult({ session: "busy", id: `busy_${i}`, tool: "Read", timeMs: end - 1000 + i }),
    ),
  );
  for (
    const run of [
      "claude-code-2.1.330/http-json",
      "claude-code-mcp-2.1.332/http-json",
      "codex-mcp-0.169.0/http-json",
      "gemini-cli-0.61.0/http",
    ]
  ) {
    await replayRecordedJson(server.ingestUrl, org.ingestKey, run, end);
  }
  const response = await server.ingest("/v1/traces", genAiSpan(end), org.ingestKey);
  assert.equal(response.status, 200, await response.text());
  // A session with dimensions and a repository (docs/api.md §4.22).
  const teamed = claudeExport([
    toolResult({ session: "teamed", id: "teamed_1", tool: "Read", timeMs: end - 500 }),
  ]);
  teamed.resourceLogs[0]!.resource.attributes.push(
    { key: "team.id", value: { stringValue: "platform" } },
    { key: "vcs.repository.url.full", value: { stringValue: "https://github.com/acme/app" } },
  );
  const dimensions = await server.ingest("/v1/logs", teamed, org.ingestKey);
  assert.equal(dimensions.status, 200, await dimensions.text());
  return org;
}

/** The requests of the run: every path, its successes over the data set and its errors. */
async function conformanceCases(server: TestServer, org: TestOrg): Promise<Case[]> {
  const key = org.apiKey;
  const ok = (path: string, url = path): Case => ({ path, url, key, status: 200 });
  const fails = (path: string, url: string, status: number): Case => ({ path, url, key, status });
  const sessions = (await server.getJson("/v1/sessions?limit=500", key)).body.data;
  const calls = (await server.getJson("/v1/tool-calls?limit=500", key)).body.data;
  const insight = (name: string): Case[] => {
    const path = `/v1/insights/${name}`;
    return [
      ok(path),
      ok(path, `${path}?window=30d&granularity=weekly`),
      ok(path, `${path}?window=90D`),
      fails(path, `${path}?window=7d&granularity=weekly`, 400),
      fails(path, `${path}?window=1y`, 400),
      ok(path, `${path}?window=90d&group_by=actor`),
      ok(path, `${path}?window=90d&group_by=dim.team.id`),
      fails(path, `${path}?group_by=team`, 400),
    ];
  };
  return [
    ok("/v1/ping"),
    ok("/v1/sessions", "/v1/sessions?limit=500"),
    ok("/v1/sessions", "/v1/sessions?limit=1"),
    ok("/v1/sessions", `/v1/sessions?domain=api.github.com&team=${org.actorId}`),
    ok("/v1/sessions", "/v1/sessions?agent=nobody"),
    fails("/v1/sessions", "/v1/sessions?limit=501", 400),
    fails("/v1/sessions", "/v1/sessions?after=yesterday", 400),
    fails("/v1/sessions", "/v1/sessions?cursor=forged", 400),
    fails("/v1/sessions", "/v1/sessions?tag=x", 501),
    ok("/v1/sessions", "/v1/sessions?dim.team.id=platform&repository=https://github.com/acme/app"),
    fails("/v1/sessions", "/v1/sessions?dim.bad%20key=x", 400),
    ok("/v1/dimensions"),
    ok("/v1/sessions/facets"),
    ...sessions.map((s: Json) =>
      ok("/v1/sessions/{id}", `/v1/sessions/${encodeURIComponent(s.session_id)}`)
    ),
    fails("/v1/sessions/{id}", "/v1/sessions/no-such-session", 404),
    ok("/v1/tool-calls", "/v1/tool-calls?limit=500"),
    ok("/v1/tool-calls", "/v1/tool-calls?limit=1&outcome=REJECTED"),
    fails("/v1/tool-calls", "/v1/tool-calls?success=true", 400),
    fails("/v1/tool-calls", "/v1/tool-calls?outcome=maybe", 400),
    ok("/v1/tool-calls/facets"),
    ...calls.map((c: Json) =>
      ok("/v1/tool-calls/{id}", `/v1/tool-calls/${encodeURIComponent(c.id)}`)
    ),
    fails("/v1/tool-calls/{id}", "/v1/tool-calls/no-such-call", 404),
    ok("/v1/export/tool-calls"),
    ok(
      "/v1/export/tool-calls",
      "/v1/export/tool-calls?outcome=REJECTED&before=2999-01-01T00:00:00Z",
    ),
    ok("/v1/export/tool-calls", "/v1/export/tool-calls?tool_name=nothing"),
    ok(
      "/v1/export/tool-calls",
      `/v1/export/tool-calls?after=${calls.at(-1).timestamp}&after_id=${calls.at(-1).id}`,
    ),
    fails("/v1/export/tool-calls", "/v1/export/tool-calls?after_id=x", 400),
    fails("/v1/export/tool-calls", "/v1/export/tool-calls?success=true", 400),
    ok("/v1/export/sessions"),
    ok("/v1/export/sessions", `/v1/export/sessions?domain=api.github.com&team=${org.actorId}`),
    fails("/v1/export/sessions", "/v1/export/sessions?before=soon", 400),
    ok("/v1/unmapped-events"),
    ok("/v1/unmapped-events", `/v1/unmapped-events?actor=${org.actorId}`),
    ok("/v1/fleet"),
    ok("/v1/fleet", "/v1/fleet?silent_days=1"),
    fails("/v1/fleet", "/v1/fleet?silent_days=0", 400),
    ...["activity", "top-tools", "outliers", "cost", "risk", "domains", "productivity"]
      .flatMap(insight),
    ok("/v1/insights/productivity", `/v1/insights/productivity?window=30d&team=${org.actorId}`),
    { path: "/healthz", url: "/healthz", key: undefined, status: 200 },
    { path: "/readyz", url: "/readyz", key: undefined, status: 200 },
    { path: "/v1/openapi.json", url: "/v1/openapi.json", key: undefined, status: 200 },
  ];
}

/** The field paths a schema documents (`.data[].session_id`), through references and unions. */
function documentedFields(document: Json, schema: Json, at = "", out = new Set<string>()) {
  if (schema.$ref !== undefined) {
    const id = String(schema.$ref).split("/").at(-1)!;
    return documentedFields(document, document.components.schemas[id], at, out);
  }
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    documentedFields(document, alternative, at, out);
  }
  for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
    out.add(`${at}.${name}`);
    documentedFields(document, property, `${at}.${name}`, out);
  }
  if (typeof schema.items === "object") documentedFields(document, schema.items, `${at}[]`, out);
  return out;
}

/** The field paths a body holds. */
function fieldsOf(value: unknown, at = "", out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) { for (const item of value) fieldsOf(item, `${at}[]`, out); }
  else if (value !== null && typeof value === "object") {
    for (const [name, inner] of Object.entries(value)) {
      out.add(`${at}.${name}`);
      fieldsOf(inner, `${at}.${name}`, out);
    }
  }
  return out;
}

/**
 * Documented fields no data can show yet: no agent's mapping reports a
 * working directory (docs/api.md §2.5's `cwd` is stored when one does).
 */
const NEVER_SERVED = new Set(["/v1/tool-calls/{id} .cwd"]);

engineTest(
  "every endpoint's answers, successes and errors, match the document and show each field it names",
  async (t) => {
    await using server = await startTestServer();
    const org = await loadData(server);
    const document = await servedDocument(server);
    const validator = new ResponseValidator(document);
    const cases = await conformanceCases(server, org);
    const seen = new Map<string, Set<string>>();
    /** What is wrong with the answer to `test`; its fields are noted as seen. */
    const check = async (test: Case): Promise<string[]> => {
      const response = await server.get(test.url, test.key);
      const text = await response.text();
      if (response.status !== test.status) {
        return [`GET ${test.url}: ${response.status}, not ${test.status}: ${text}`];
      }
      const contentType = response.headers.get("content-type");
      // NDJSON is documented as the array of its lines.
      const body = contentType === NDJSON
        ? text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))
        : JSON.parse(text);
      const key = `${test.path} ${response.status}`;
      seen.set(key, fieldsOf(body, "", seen.get(key)));
      return validator.problems(test.path, response.status, contentType, body)
        .map((problem) => `GET ${test.url} → ${response.status}: ${problem}`);
    };
    await t.step("every case answers as documented", async () => {
      const problems: string[] = [];
      for (const test of cases) problems.push(...await check(test));
      assert.deepEqual(problems, []);
    });
    await t.step("without a key, every keyed path is 401 as documented", async () => {
      const problems: string[] = [];
      for (const path of Object.keys(document.paths)) {
        if (OPEN_PATHS.includes(path)) continue;
        const url = path.replace(/\{\w+\}/g, "x");
        problems.push(...await check({ path, url, key: undefined, status: 401 }));
      }
      assert.deepEqual(problems, []);
    });
    await t.step("every path had a case, and every field of every answer was seen", () => {
      for (const path of Object.keys(document.paths)) {
        assert.ok(seen.has(`${path} 200`), `no 200 case for ${path}`);
      }
      const unseen: string[] = [];
      for (const [key, fields] of seen) {
        const [path, status] = key.split(" ");
        // The document's own fields are OpenAPI's, not described here.
        if (path === OPENAPI_PATH) continue;
        const response = validator.response(path!, Number(status));
        if (response === undefined) continue;
        const { schema } = Object.values<Json>(response.content)[0];
        for (const field of documentedFields(document, schema)) {
          if (!fields.has(field) && !NEVER_SERVED.has(`${path} ${field}`)) {
            unseen.push(`${key} ${field}`);
          }
        }
      }
      assert.deepEqual(unseen, [], "documented fields no answer showed");
    });
  },
);

engineTest("with the key store out of reach, every keyed path is 503 as documented", async () => {
  const failing = (): KeyVerifier => ({
    verifyApiKey: () => {
      throw new Error("key store down");
    },
    verifyIngestKey: () => {
      throw new Error("key store down");
    },
  });
  await using server = await startTestServer({ overrides: { keys: failing } });
  const document = await servedDocument(server);
  const validator = new ResponseValidator(document);
  for (const path of Object.keys(document.paths)) {
    if (OPEN_PATHS.includes(path)) continue;
    const response = await server.get(path.replace(/\{\w+\}/g, "x"), "wb_api_anything");
    const body = await response.json();
    assert.equal(response.status, 503, path);
    assert.equal(body.error.code, "keystore_unavailable");
    const problems = validator.problems(path, 503, response.headers.get("content-type"), body);
    assert.deepEqual(problems, [], path);
  }
});

import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";

interface Scenario {
  name: string;
  path: string;
  status: number;
  code?: string;
  message?: RegExp | string;
}

const scenarios: Scenario[] = [
  {
    name: "limit above 500",
    path: "/v1/sessions?limit=501",
    status: 400,
    code: "invalid_request",
    message: "invalid limit: 501 > 500",
  },
  { name: "limit 0", path: "/v1/tool-calls?limit=0", status: 400, message: /^invalid limit: 0/ },
  { name: "limit -1", path: "/v1/tool-calls?limit=-1", status: 400, message: /^invalid limit: -1/ },
  {
    name: "limit 1.5",
    path: "/v1/sessions?limit=1.5",
    status: 400,
    message: /^invalid limit: "1.5"/,
  },
  {
    name: "limit abc",
    path: "/v1/sessions?limit=abc",
    status: 400,
    message: /^invalid limit: "abc"/,
  },
  { name: "limit 500", path: "/v1/sessions?limit=500", status: 200 },
  { name: "limit 1", path: "/v1/tool-calls?limit=1", status: 200 },
  { name: "after with Z", path: "/v1/sessions?after=2026-11-20T10:00:00Z", status: 200 },
  {
    name: "after with encoded offset",
    path: "/v1/tool-calls?after=2026-11-20T10:00:00%2B05:00",
    status: 200,
  },
  {
    name: "before with fraction and offset",
    path: "/v1/tool-calls?before=2026-11-20T10:00:00.123-03:00",
    status: 200,
  },
  {
    name: "after without zone",
    path: "/v1/sessions?after=2026-11-20T10:00:00",
    status: 400,
    message: /^invalid after: /,
  },
  {
    name: "bare date",
    path: "/v1/tool-calls?before=2026-11-20",
    status: 400,
    message: /^invalid before: /,
  },
  {
    name: "unencoded plus",
    path: "/v1/tool-calls?after=2026-11-20T10:00:00+05:00",
    status: 400,
    message: /%2B/,
  },
  { name: "impossible date", path: "/v1/tool-calls?after=2026-02-30T10:00:00Z", status: 400 },
  { name: "outcome upper case", path: "/v1/tool-calls?outcome=REJECTED", status: 200 },
  {
    name: "outcome bad",
    path: "/v1/tool-calls?outcome=failed",
    status: 400,
    message: 'invalid outcome: "failed" (allowed: ok, error, rejected)',
  },
  {
    name: "success",
    path: "/v1/tool-calls?success=true",
    status: 400,
    message: /success filter is replaced by outcome.*ok, error or rejected/,
  },
  { name: "tag with a value", path: "/v1/sessions?tag=prod", status: 501, code: "not_implemented" },
  { name: "tag empty", path: "/v1/sessions?tag=", status: 501, code: "not_implemented" },
  {
    name: "tag before other parameter checks",
    path: "/v1/sessions?limit=999&tag=x",
    status: 501,
    code: "not_implemented",
  },
  { name: "tag on tool-calls is unknown, ignored", path: "/v1/tool-calls?tag=x", status: 200 },
  { name: "unknown parameters ignored", path: "/v1/sessions?color=blue&x=", status: 200 },
  {
    name: "cursor garbage",
    path: "/v1/sessions?cursor=%%%",
    status: 400,
    message: /^invalid cursor/,
  },
  {
    name: "cursor base64 of junk",
    path: "/v1/tool-calls?cursor=aGVsbG8",
    status: 400,
    message: /^invalid cursor/,
  },
];

engineTest("query parameters are validated with messages that name the problem", async (t) => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  for (const scenario of scenarios) {
    await t.step(`${scenario.name}: ${scenario.path}`, async () => {
      const { status, body } = await server.getJson(scenario.path, org.apiKey);
      assert.equal(status, scenario.status, JSON.stringify(body));
      if (scenario.status === 200) {
        assert.deepEqual(body, { data: [] });
        return;
      }
      assert.deepEqual(Object.keys(body), ["error"]);
      assert.deepEqual(Object.keys(body.error).sort(), ["code", "message"]);
      assert.equal(body.error.code, scenario.code ?? "invalid_request");
      if (typeof scenario.message === "string") assert.equal(body.error.message, scenario.message);
      else if (scenario.message) assert.match(body.error.message, scenario.message);
    });
  }
  await t.step("tag is checked after auth", async () => {
    const { status } = await server.getJson("/v1/sessions?tag=x", "");
    assert.equal(status, 401);
  });
});

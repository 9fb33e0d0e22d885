/**
 * Key names read by meaning (`src/detect/rules/_key_names.ts`) and the
 * fillers every credential rule rejects (`rules/_placeholders.ts`): each
 * case below is a name or value the first pass of issue #20 got wrong or
 * decided on purpose.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type DetectInput, detectToolCall } from "../src/detect/mod.ts";
import { keyWords, secretKeyKind, VENDOR_KEY_NAMES } from "../src/detect/rules/_key_names.ts";

const vendors = new Set(VENDOR_KEY_NAMES);

Deno.test("key names are cut into lower-case words at camelCase, acronyms and separators", () => {
  assert.deepEqual(keyWords("apiToken"), ["api", "token"]);
  assert.deepEqual(keyWords("DB_PASSWORD_PROD"), ["db", "password", "prod"]);
  assert.deepEqual(keyWords("AWSSecretKey"), ["aws", "secret", "key"]);
  assert.deepEqual(keyWords("io.jsonwebtoken"), ["io", "jsonwebtoken"]);
  assert.deepEqual(keyWords("x-api-key:v2"), ["x", "api", "key", "v", "2"]);
  assert.deepEqual(keyWords("bot_token4"), ["bot", "token", "4"]);
  assert.deepEqual(keyWords("i18n_key"), ["i18n", "key"]);
});

Deno.test("the head noun of a key name decides what secret it announces", () => {
  const cases: [string, string | undefined][] = [
    // secrets
    ["password", "password"],
    ["DB_PASSWORD_PROD", "password"],
    ["PGPASSWORD", "password"],
    ["apiToken", "token"],
    ["GITHUB_TOKEN_2", "token"],
    ["api_key", "api_key"],
    ["apikey", "api_key"],
    ["client_secret", "client_secret"],
    ["stripe_secret_key", "secret"],
    ["signingKey", "secret"],
    ["hubspotKey", "secret"],
    ["SNYK_KEY", "secret"],
    ["ClearTextPassword", "password"],
    ["passwordValue", "password"],
    ["token4", "token"],
    ["apiKey2", "api_key"],
    // not secrets: another head noun
    ["password_file", undefined],
    ["passwordHash", undefined],
    ["token_type", undefined],
    ["token_expiry", undefined],
    ["max_tokens", undefined],
    ["jsonwebtoken", undefined],
    ["secret_name", undefined],
    // not secrets: a modifier that makes the token or key something else
    ["page_token", undefined],
    ["nextPageToken", undefined],
    ["csrf-token", undefined],
    ["authenticity_token", undefined],
    ["public_key", undefined],
    ["primaryKey", undefined],
    ["sort_key", undefined],
    ["idempotency_key", undefined],
    ["cacheKey", undefined],
    // a bare `key` says nothing
    ["key", undefined],
    ["foo_key", undefined],
  ];
  for (const [name, kind] of cases) assert.equal(secretKeyKind(name, vendors), kind, name);
});

const writeFile = (content: string): DetectInput => ({
  toolName: "Write",
  toolType: "builtin",
  category: "file_write",
  arguments: JSON.stringify({ file_path: "/repo/settings.txt", content }),
});
const evidence = (input: DetectInput) =>
  detectToolCall(input, { redact: false }).flags.find((flag) => flag.flag === "credential_detected")
    ?.evidence;

Deno.test("assignments in the languages agents write are read by their key name", () => {
  const secret = "Zq7FAKEw2Rx9Lm4";
  const forms: [string, string][] = [
    [`API_TOKEN=${secret}`, "generic_token"],
    [`export DB_PASSWORD='${secret}'`, "generic_password"],
    [`var apiToken string = "${secret}"`, "generic_token"],
    [`apiToken := \`${secret}\``, "generic_token"],
    [`val dbPassword: String = "${secret}"`, "generic_password"],
    [`private const string ApiKey = "${secret}";`, "generic_api_key"],
    [`API_TOKEN ?= ${secret}`, "generic_token"],
    [`API_TOKEN ::= ${secret}`, "generic_token"],
    [`$password .= "${secret}";`, "generic_password"],
    [`'client_secret' => '${secret}',`, "client_secret"],
    [`System.setProperty("API_TOKEN", "${secret}");`, "generic_token"],
    [`api_token = "${secret}"  # terraform`, "generic_token"],
    [`db.password=${secret}`, "generic_password"],
    [`<apiToken>\n  ${secret}\n</apiToken>`, "generic_token"],
    [`<add key="ClearTextPassword" value="${secret}" />`, "generic_password"],
    [`env:\n  - name: API_TOKEN\n    value: ${secret}`, "generic_token"],
  ];
  for (const [text, label] of forms) {
    assert.equal(evidence(writeFile(text)), `${label}: Zq7F…`, text);
  }
});

Deno.test("an assignment's value never comes from the next line", () => {
  for (
    const text of [
      "GITHUB_API_KEY=\nDYNATRACE_API_KEY=Zq7FAKEw2Rx9Lm4abc",
      "API_TOKEN =\n  Zq7FAKEw2Rx9Lm4",
      "password:\nZq7FAKEw2Rx9Lm4",
      "API_TOKEN:=\r\nZq7FAKEw2Rx9Lm4",
    ]
  ) {
    // The second line's own name (DYNATRACE_API_KEY) may still hold a secret.
    const found = evidence(writeFile(text));
    assert.ok(found === undefined || text.startsWith("GITHUB"), `${text}: ${found}`);
  }
  assert.equal(
    evidence(writeFile("GITHUB_API_KEY=\nDYNATRACE_API_KEY=Zq7FAKEw2Rx9Lm4abc")),
    "generic_api_key: Zq7F…",
  );
});

Deno.test("code, placeholders and fillers in an assignment are not secrets", () => {
  for (
    const text of [
      "token = decodeURIComponent(params.get(hash))",
      "token = config.auth.token2",
      "apiKey = OAuth2Client",
      "password = K8S_VOLUME_TYPE",
      "password = ${DB_PASSWORD}",
      "password = %NUGET_PASSWORD%",
      "api_key = <your-api-key>",
      "api_key = your_api_key_here",
      "api_key = abcdefghijklmnopqrstuvwxyz123",
      "api_key = qwertyuiop1234",
      "api_key = xxxxxxxxxxxxxxxx",
      "password = ops_eyJzaWduSW5BZGRyZXNzIjoi...",
      "password = Zq7FAKEw…",
      "API_TOKEN=[Redacted]",
      "password = Passwort123ä",
      'curl -u "xxx:yyy" https://api.example.com',
      "curl -u username:token https://api.example.com",
      "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa",
      "sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXX",
      "token4 = Zq7FAKEw2Rx9########",
    ]
  ) {
    assert.equal(evidence(writeFile(text)), undefined, text);
  }
});

Deno.test("a run of eight equal characters is a filler only in short secrets", () => {
  // Base64 of keys holds runs of `A` from zero bytes; a PEM body is not a filler.
  const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
    "QyNTUxOQAAACBFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2QeTzAAAAJgFAKE\n" +
    "-----END OPENSSH PRIVATE KEY-----";
  assert.equal(evidence(writeFile(pem)), "private_key: b3Bl…");
});

/**
 * What a key name says it holds, read by meaning rather than by substrings:
 * the name is cut into words (`apiToken` → `api token`, `DB_PASSWORD_PROD` →
 * `db password prod`), words that only qualify where a value is used
 * (`prod`, `value`, `2`) are dropped from the end, and the last word left —
 * the head noun — decides. `password_file` is a file, `token_type` a type,
 * `max_tokens` a count, `jsonwebtoken` a library, `page_token` a cursor;
 * `hubspotKey` and `stripe_secret_key` are secrets.
 *
 * @module
 */

/** Kinds of secret a key name can announce (the generic rules' labels). */
export type SecretKeyKind = "password" | "token" | "api_key" | "client_secret" | "secret";

/** Trailing words that qualify a secret's use, not what it is. */
const TRANSPARENT = new Set([
  "value",
  "val",
  "str",
  "string",
  "plain",
  "plaintext",
  "raw",
  "b64",
  "base64",
  "prod",
  "production",
  "dev",
  "development",
  "staging",
  "stage",
  "test",
  "testing",
  "live",
  "local",
  "default",
  "new",
  "old",
  "current",
  "override",
  "cleartext",
]);

/** Words before the head noun that make a token or key something other than a credential. */
const NOT_SECRET_MODIFIERS = new Set([
  "page",
  "next",
  "prev",
  "previous",
  "continuation",
  "cursor",
  "sync",
  "csrf",
  "xsrf",
  "authenticity",
  "max",
  "min",
  "num",
  "total",
  "public",
  "publishable",
  "input",
  "output",
  "cache",
  "sort",
  "partition",
  "primary",
  "foreign",
  "unique",
  "idempotency",
  "dedup",
  "dedupe",
  "lookup",
  "map",
  "hash",
  "row",
  "object",
  "registry",
  "translation",
  "i18n",
  "locale",
  "storage",
  "bypass",
  "event",
  "matching",
  "non",
]);

/** Words before `key` that make it a credential (`api key`, `signing key`, …). */
const SECRET_KEY_MODIFIERS = new Set([
  "api",
  "access",
  "secret",
  "private",
  "auth",
  "client",
  "signing",
  "encryption",
  "master",
  "license",
  "licence",
  "app",
  "application",
  "service",
  "account",
  "admin",
  "personal",
  "deploy",
  "consumer",
  "webhook",
  "session",
  "bot",
  "integration",
  "sdk",
  "server",
  "management",
  "rest",
  "write",
  "ingest",
  "jwt",
  "hmac",
  "shared",
  "subscription",
  "user",
  "org",
  "organization",
  "root",
]);

/**
 * Vendors whose "key" is a credential: `HUBSPOT_KEY`, `snykKey`. Rules add
 * their own `names` to these.
 */
export const VENDOR_KEY_NAMES: readonly string[] = [
  "airtable",
  "algolia",
  "amplitude",
  "anthropic",
  "artifactory",
  "asana",
  "atlassian",
  "auth0",
  "azure",
  "bitbucket",
  "braintree",
  "brevo",
  "bugsnag",
  "circleci",
  "cloudflare",
  "codecov",
  "cohere",
  "coinbase",
  "contentful",
  "datadog",
  "deepseek",
  "digitalocean",
  "discord",
  "doppler",
  "dropbox",
  "dynatrace",
  "etherscan",
  "firebase",
  "github",
  "gitlab",
  "grafana",
  "groq",
  "heroku",
  "honeycomb",
  "hubspot",
  "huggingface",
  "infura",
  "intercom",
  "jfrog",
  "launchdarkly",
  "linear",
  "mailchimp",
  "mailgun",
  "mandrill",
  "mapbox",
  "meraki",
  "messagebird",
  "mistral",
  "mixpanel",
  "netlify",
  "newrelic",
  "nexmo",
  "notion",
  "okta",
  "openai",
  "opsgenie",
  "pagerduty",
  "paypal",
  "pinecone",
  "plaid",
  "plivo",
  "postmark",
  "pulumi",
  "pusher",
  "replicate",
  "rollbar",
  "segment",
  "sendgrid",
  "sentry",
  "shopify",
  "slack",
  "snyk",
  "sonar",
  "sparkpost",
  "stripe",
  "sumologic",
  "supabase",
  "telnyx",
  "twilio",
  "vercel",
  "vonage",
  "zendesk",
];

const PASSWORD_NOUNS = new Set([
  "password",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "passcode",
  "pw",
]);
const SECRET_NOUNS = new Set(["secret", "credential", "credentials", "creds", "cred", "auth"]);
/** Single words that are a secret noun joined to its modifier (`apikey`, `authtoken`). */
const COMPOUNDS: Record<string, SecretKeyKind> = {
  apikey: "api_key",
  apitoken: "token",
  accesstoken: "token",
  authtoken: "token",
  accesskey: "secret",
  secretkey: "secret",
  privatekey: "secret",
  clientsecret: "client_secret",
  appsecret: "secret",
  apisecret: "secret",
  cleartextpassword: "password",
  dbpassword: "password",
};

/**
 * The words of a key name, lower-cased: camelCase, `_`, `-`, `.`, `:` and
 * spaces split it, and so do digits that end a word (`token4`, `apiKey2`;
 * not `i18n` or `k8s`).
 */
export function keyWords(name: string): string[] {
  return name
    .replace(/([A-Za-z])(\d+)(?![A-Za-z\d])/g, "$1 $2")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
}

/**
 * The kind of secret a key name announces, or undefined when its head noun
 * names something else. `vendors` are names that make a bare `key` a
 * credential (`hubspotKey`, `SNYK_KEY`).
 */
export function secretKeyKind(
  name: string,
  vendors: ReadonlySet<string>,
): SecretKeyKind | undefined {
  const words = keyWords(name);
  while (words.length > 1 && (TRANSPARENT.has(words.at(-1)!) || /^\d+$/.test(words.at(-1)!))) {
    words.pop();
  }
  const head = words.at(-1);
  if (head === undefined) return undefined;
  const before = words.slice(0, -1);
  if (before.some((word) => NOT_SECRET_MODIFIERS.has(word))) return undefined;
  const modifier = before.at(-1);
  if (COMPOUNDS[head] !== undefined) return COMPOUNDS[head];
  if (PASSWORD_NOUNS.has(head) || /^[a-z]+pass(?:wor)?d$/.test(head)) return "password";
  if (head === "token") return "token";
  if (head === "secret" && modifier === "client") return "client_secret";
  if (SECRET_NOUNS.has(head)) return "secret";
  if (head === "key") {
    if (modifier === "api") return "api_key";
    if (modifier !== undefined && (SECRET_KEY_MODIFIERS.has(modifier) || vendors.has(modifier))) {
      return "secret";
    }
  }
  return undefined;
}

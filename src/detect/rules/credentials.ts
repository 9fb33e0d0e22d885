/**
 * Credential formats, written from the vendors' published token formats.
 * Order matters: when two rules find a secret at the same place, the earlier
 * rule names it, so vendor formats come first, then context rules (URLs,
 * headers), then generic `key = value` assignments.
 *
 * @module
 */

import type { CredentialRule } from "../_types.ts";
import { codeValues, defaultPasswords, placeholderSecrets } from "./_placeholders.ts";

/** Base64 body of a PEM block, optionally with RFC 1421 headers, newlines raw or JSON-escaped. */
const PEM_BODY = String
  .raw`((?:[A-Za-z0-9+/=]|(?:Proc-Type|DEK-Info|Comment):[^\n\\]*)(?:[A-Za-z0-9+/=]|\s|\\[nrt]|(?:Proc-Type|DEK-Info|Comment):[^\n\\]*)*)`;

/**
 * Separator of a `key = value` assignment in the languages and formats agents
 * touch: `=`, `:`, `:=`, `::=`, `:::=`, `?=`, `??=`, `.=`, `+=`, `=>`, `->`,
 * and `,` after a quoted key (`System.setProperty("API_TOKEN", "…")`), with
 * quotes around the key. Blanks around it never include a line break, so a
 * key with no value never takes the next line's. Here and in the rules below
 * a quote may be JSON-escaped (`\"`), as in a JSON document read as text.
 */
const ASSIGN = String
  .raw`(?:\\?["'])?[ \t]{0,4}(?:\?\?=|:{1,3}=|[?.+]=|=>|->|=|:|(?<=["'][ \t]{0,4}),(?=[ \t]{0,4}\\?["']))[ \t]{0,4}(?![:=])`;
/**
 * A declared type between a name and its `=` (Go `var apiToken string =`,
 * Kotlin and TypeScript `val apiToken: String =`).
 */
const DECLARED_TYPE = String
  .raw`(?:[ \t]*:[ \t]*[A-Za-z_][\w.<>\[\]]{0,30}\??(?=[ \t]*=)|[ \t]+(?:string|String|str|\[\]byte)(?=[ \t]*=))?`;
/**
 * The value of an assignment: quoted (JSON-escaped quotes and Go backticks
 * too), or up to a delimiter but not a function call (`decodeURIComponent(…)`).
 */
const VALUE = String
  .raw`(?:\\"([^"\s\\]{8,200})\\"|"([^"\s]{8,200})"|'([^'\s]{8,200})'|\x60([^\x60\s]{8,200})\x60|(?![^\s"'\x60,;&|<>(){}\[\]\\]*\()([^\s"'\x60,;&|<>(){}\[\]\\]{8,200}))`;
/** Words that start a name a secret may be assigned to; `_key_names.ts` reads the whole name. */
const SECRET_NAME = String
  .raw`(?:passw(?:or)?d|passphrase|passcode|pwd|pass|token|secret|api[_.-]?key|key|credentials?|creds|auth)`;
/** Prefilter keywords of the rules that find a secret by its name. */
const SECRET_NAME_KEYWORDS = ["pass", "pwd", "token", "secret", "key", "cred", "auth"];

/** Every credential rule, most specific first. */
export const credentialRules: CredentialRule[] = [
  // --- Cloud providers -------------------------------------------------------
  {
    id: "aws-access-key-id",
    kind: "credential_detected",
    label: "aws_access_key_id",
    keywords: ["akia", "asia", "abia", "acca", "a3t"],
    pattern: /\b((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Za-z0-9])/,
    minEntropy: 3,
    // AWS documentation keys end in EXAMPLE (AKIAIOSFODNN7EXAMPLE).
    allow: [/EXAMPLE/],
  },
  {
    id: "aws-secret-access-key",
    kind: "credential_detected",
    label: "aws_secret_access_key",
    keywords: ["secret"],
    pattern: new RegExp(
      String
        .raw`secret[_.-]?(?:access[_.-]?)?key(?:${ASSIGN}|\s+)(?:\\?["'])?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
      "i",
    ),
    requires: /aws|amazon|secretaccesskey/i,
    minEntropy: 3.5,
    allow: [/EXAMPLE/],
  },
  {
    id: "aws-secret-access-key-json",
    kind: "credential_detected",
    label: "aws_secret_access_key",
    keywords: ["secret"],
    key: /^(?:aws_?)?secret_?(?:access_?)?key$/i,
    pattern: /^([A-Za-z0-9/+]{40})$/,
    minEntropy: 3.5,
    allow: [/EXAMPLE/],
  },
  {
    id: "aws-session-token",
    kind: "credential_detected",
    label: "aws_session_token",
    keywords: ["token"],
    pattern: new RegExp(
      String.raw`session[_.-]?token${ASSIGN}(?:\\?["'])?([A-Za-z0-9/+=]{100,4096})`,
      "i",
    ),
    requires: /aws|amazon|sessiontoken/i,
    minEntropy: 4,
  },
  {
    id: "gcp-api-key",
    kind: "credential_detected",
    label: "gcp_api_key",
    keywords: ["aiza"],
    pattern: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/,
    minEntropy: 3,
  },
  {
    id: "gcp-service-account",
    kind: "credential_detected",
    label: "gcp_service_account",
    keywords: ["service_account"],
    pattern: new RegExp(
      String.raw`"private_key"\s*:\s*"-----BEGIN[A-Z ]{0,20}PRIVATE KEY-----(?:\\n|\s)*${PEM_BODY}`,
    ),
    requires: /"type"\s*:\s*"service_account"/,
    minLength: 40,
  },
  {
    id: "gcp-service-account-json",
    kind: "credential_detected",
    label: "gcp_service_account",
    keywords: ["service_account"],
    key: /^private_key$/,
    pattern: new RegExp(String.raw`^-----BEGIN[A-Z ]{0,20}PRIVATE KEY-----(?:\\n|\s)*${PEM_BODY}`),
    requires: /"type"\s*:\s*"service_account"/,
    minLength: 40,
  },
  {
    id: "google-oauth-client-secret",
    kind: "credential_detected",
    label: "google_oauth_client_secret",
    keywords: ["gocspx-"],
    pattern: /\b(GOCSPX-[A-Za-z0-9_-]{28})(?![A-Za-z0-9_-])/,
  },
  {
    id: "google-oauth-access-token",
    kind: "credential_detected",
    label: "google_oauth_access_token",
    keywords: ["ya29."],
    pattern: /\b(ya29\.[A-Za-z0-9_-]{30,2048})/,
    minEntropy: 3.5,
  },
  {
    id: "google-oauth-refresh-token",
    kind: "credential_detected",
    label: "google_oauth_refresh_token",
    keywords: ["1//0"],
    pattern: /\b(1\/\/0[A-Za-z0-9_-]{40,512})/,
    minEntropy: 3.5,
  },
  {
    id: "azure-storage-account-key",
    kind: "credential_detected",
    label: "azure_storage_account_key",
    keywords: ["accountkey="],
    pattern: /AccountKey=([A-Za-z0-9+/]{86}==)/,
  },
  {
    id: "azure-shared-access-key",
    kind: "credential_detected",
    label: "azure_shared_access_key",
    keywords: ["sharedaccesskey="],
    pattern: /SharedAccessKey=([A-Za-z0-9+/]{42,44}=)/,
  },
  {
    id: "azure-sas-token",
    kind: "credential_detected",
    label: "azure_sas_token",
    keywords: ["sig="],
    pattern: /[?&;]sig=([A-Za-z0-9%+/]{40,120}(?:%3D|=){0,2})/,
    requires: /[?&;]sv=\d{4}-\d{2}-\d{2}/,
  },
  {
    id: "azure-client-secret",
    kind: "credential_detected",
    label: "azure_client_secret",
    keywords: ["q~"],
    pattern:
      /(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/,
    minEntropy: 3.5,
  },
  {
    id: "digitalocean-token",
    kind: "credential_detected",
    label: "digitalocean_token",
    keywords: ["_v1_"],
    pattern: /\b(do[opr]_v1_[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "heroku-api-key",
    kind: "credential_detected",
    label: "heroku_api_key",
    keywords: ["hrku-"],
    pattern: /\b(HRKU-AA[0-9A-Za-z_-]{58})(?![0-9A-Za-z_-])/,
  },
  {
    id: "heroku-api-key-uuid",
    kind: "credential_detected",
    label: "heroku_api_key",
    keywords: ["heroku"],
    pattern: new RegExp(
      String
        .raw`heroku[\w.-]{0,20}?(?:api[_-]?key|token|key)${ASSIGN}(?:\\?["'])?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`,
      "i",
    ),
  },
  {
    id: "cloudflare-api-token",
    kind: "credential_detected",
    label: "cloudflare_api_token",
    keywords: ["cloudflare", "cf_", "cf-"],
    pattern: new RegExp(
      String
        .raw`(?:cloudflare|cf)[_-]?(?:api[_-]?)?(?:token|key)${ASSIGN}(?:\\?["'])?([A-Za-z0-9_-]{37,45})(?![A-Za-z0-9_-])`,
      "i",
    ),
    minEntropy: 3.5,
  },
  {
    id: "databricks-token",
    kind: "credential_detected",
    label: "databricks_token",
    keywords: ["dapi"],
    pattern: /\b(dapi[a-f0-9]{32}(?:-\d)?)(?![a-f0-9])/,
    minEntropy: 3,
  },
  // --- Source hosting and package registries --------------------------------
  {
    id: "github-pat",
    kind: "credential_detected",
    label: "github_pat",
    keywords: ["ghp_"],
    pattern: /\b(ghp_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-oauth-token",
    kind: "credential_detected",
    label: "github_oauth_token",
    keywords: ["gho_"],
    pattern: /\b(gho_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-user-token",
    kind: "credential_detected",
    label: "github_user_token",
    keywords: ["ghu_"],
    pattern: /\b(ghu_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-app-token",
    kind: "credential_detected",
    label: "github_app_token",
    keywords: ["ghs_"],
    pattern: /\b(ghs_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-refresh-token",
    kind: "credential_detected",
    label: "github_refresh_token",
    keywords: ["ghr_"],
    pattern: /\b(ghr_[A-Za-z0-9]{36,76})(?![A-Za-z0-9])/,
  },
  {
    id: "github-fine-grained-pat",
    kind: "credential_detected",
    label: "github_fine_grained_pat",
    keywords: ["github_pat_"],
    // 22 characters, `_`, 59 characters: 82 after the prefix
    pattern: /\b(github_pat_[A-Za-z0-9_]{82})(?![A-Za-z0-9_])/,
  },
  {
    id: "gitlab-pat",
    kind: "credential_detected",
    label: "gitlab_pat",
    keywords: ["gl"],
    pattern: /\b(glpat-[A-Za-z0-9_-]{20,64}(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?)(?![A-Za-z0-9_-])/,
    minEntropy: 3,
  },
  {
    id: "gitlab-token",
    kind: "credential_detected",
    label: "gitlab_token",
    keywords: ["gl"],
    pattern:
      /\b((?:gldt|glrt|glcbt|glptt|glft|glimt|glagent|glsoat|gloas|glffct)-[A-Za-z0-9_-]{20,64})(?![A-Za-z0-9_-])/,
    minEntropy: 3,
  },
  {
    id: "gitlab-runner-registration-token",
    kind: "credential_detected",
    label: "gitlab_runner_registration_token",
    keywords: ["gr1348941"],
    pattern: /\b(GR1348941[A-Za-z0-9_-]{20})(?![A-Za-z0-9_-])/,
  },
  {
    id: "npm-access-token",
    kind: "credential_detected",
    label: "npm_access_token",
    keywords: ["npm_"],
    pattern: /\b(npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
    minEntropy: 3,
  },
  {
    id: "pypi-upload-token",
    kind: "credential_detected",
    label: "pypi_upload_token",
    keywords: ["pypi-ageichlwas5vcmc"],
    pattern: /\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,400})/,
  },
  {
    id: "rubygems-api-key",
    kind: "credential_detected",
    label: "rubygems_api_key",
    keywords: ["rubygems_"],
    pattern: /\b(rubygems_[a-f0-9]{48})(?![a-f0-9])/,
  },
  {
    id: "docker-hub-token",
    kind: "credential_detected",
    label: "docker_hub_token",
    keywords: ["dckr_"],
    pattern: /\b(dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,40})(?![A-Za-z0-9_-])/,
  },
  {
    id: "atlassian-api-token",
    kind: "credential_detected",
    label: "atlassian_api_token",
    keywords: ["tt3"],
    pattern: /\b(AT[ACS]TT3[A-Za-z0-9_=-]{100,300})/,
  },
  {
    id: "postman-api-key",
    kind: "credential_detected",
    label: "postman_api_key",
    keywords: ["pmak-"],
    pattern: /\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})(?![a-f0-9])/,
  },
  {
    id: "terraform-cloud-token",
    kind: "credential_detected",
    label: "terraform_cloud_token",
    keywords: [".atlasv1."],
    pattern: /\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,90})/,
  },
  // --- AI providers ---------------------------------------------------------
  {
    id: "anthropic-api-key",
    kind: "credential_detected",
    label: "anthropic_api_key",
    keywords: ["sk-"],
    pattern: /\b(sk-ant-api\d{2}-[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])/,
  },
  {
    id: "anthropic-admin-key",
    kind: "credential_detected",
    label: "anthropic_admin_key",
    keywords: ["sk-"],
    pattern: /\b(sk-ant-admin\d{2}-[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])/,
  },
  {
    id: "anthropic-oauth-token",
    kind: "credential_detected",
    label: "anthropic_oauth_token",
    keywords: ["sk-"],
    pattern: /\b(sk-ant-o[a-z]t\d{2}-[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])/,
  },
  {
    id: "openai-project-key",
    kind: "credential_detected",
    label: "openai_project_key",
    keywords: ["sk-"],
    pattern: /\b(sk-proj-[A-Za-z0-9_-]{40,250})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "openai-service-account-key",
    kind: "credential_detected",
    label: "openai_service_account_key",
    keywords: ["sk-"],
    pattern: /\b(sk-svcacct-[A-Za-z0-9_-]{40,250})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "openai-admin-key",
    kind: "credential_detected",
    label: "openai_admin_key",
    keywords: ["sk-"],
    pattern: /\b(sk-admin-[A-Za-z0-9_-]{40,250})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "openai-api-key",
    kind: "credential_detected",
    label: "openai_api_key",
    keywords: ["sk-"],
    pattern: /\b(sk-[A-Za-z0-9_-]{0,100}?T3BlbkFJ[A-Za-z0-9_-]{16,100})(?![A-Za-z0-9_-])/,
  },
  {
    id: "openrouter-api-key",
    kind: "credential_detected",
    label: "openrouter_api_key",
    keywords: ["sk-"],
    pattern: /\b(sk-or-v1-[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "huggingface-token",
    kind: "credential_detected",
    label: "huggingface_token",
    keywords: ["hf_", "api_org_"],
    // mixed case: a C identifier such as `hf_servingcell…` is not one
    pattern: /\b((?:hf|api_org)_(?=[a-z0-9]*[A-Z])[A-Za-z0-9]{34,40})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "xai-api-key",
    kind: "credential_detected",
    label: "xai_api_key",
    keywords: ["xai-"],
    pattern: /\b(xai-[A-Za-z0-9]{80})(?![A-Za-z0-9])/,
  },
  {
    id: "groq-api-key",
    kind: "credential_detected",
    label: "groq_api_key",
    keywords: ["gsk_"],
    pattern: /\b(gsk_[A-Za-z0-9]{52})(?![A-Za-z0-9])/,
  },
  {
    id: "replicate-api-token",
    kind: "credential_detected",
    label: "replicate_api_token",
    keywords: ["r8_"],
    pattern: /\b(r8_[A-Za-z0-9]{37})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "perplexity-api-key",
    kind: "credential_detected",
    label: "perplexity_api_key",
    keywords: ["pplx-"],
    pattern: /\b(pplx-[A-Za-z0-9]{48})(?![A-Za-z0-9])/,
  },
  {
    id: "nvidia-api-key",
    kind: "credential_detected",
    label: "nvidia_api_key",
    keywords: ["nvapi-"],
    pattern: /\b(nvapi-[A-Za-z0-9_-]{64})(?![A-Za-z0-9_-])/,
  },
  {
    id: "langsmith-api-key",
    kind: "credential_detected",
    label: "langsmith_api_key",
    keywords: ["lsv2_"],
    pattern: /\b(lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})(?![a-f0-9])/,
  },
  {
    id: "langfuse-secret-key",
    kind: "credential_detected",
    label: "langfuse_secret_key",
    keywords: ["sk-"],
    pattern: /\b(sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-f])/,
  },
  // --- Messaging and payments ------------------------------------------------
  {
    id: "slack-bot-token",
    kind: "credential_detected",
    label: "slack_bot_token",
    keywords: ["xox"],
    pattern: /\b(xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24,34})(?![A-Za-z0-9])/,
  },
  {
    id: "slack-user-token",
    kind: "credential_detected",
    label: "slack_user_token",
    keywords: ["xox"],
    pattern: /\b(xox[pe]-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{28,34})(?![A-Za-z0-9])/,
  },
  {
    id: "slack-app-token",
    kind: "credential_detected",
    label: "slack_app_token",
    keywords: ["xapp-"],
    pattern: /\b(xapp-\d-[A-Z0-9]{9,12}-\d{10,14}-[a-f0-9]{60,70})(?![a-f0-9])/,
  },
  {
    id: "slack-legacy-token",
    kind: "credential_detected",
    label: "slack_legacy_token",
    keywords: ["xox"],
    pattern: /\b(xox[aros]-(?:\d-)?[A-Za-z0-9-]{12,200})/,
    minEntropy: 3,
  },
  {
    id: "slack-webhook-url",
    kind: "credential_detected",
    label: "slack_webhook_url",
    keywords: ["hooks.slack.com"],
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9+/_-]{20,150})/,
    minEntropy: 3,
  },
  {
    id: "discord-webhook-url",
    kind: "credential_detected",
    label: "discord_webhook_url",
    keywords: ["discord"],
    pattern: /discord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/([A-Za-z0-9_-]{60,80})/,
  },
  {
    id: "discord-bot-token",
    kind: "credential_detected",
    label: "discord_bot_token",
    keywords: ["discord"],
    pattern:
      /\b([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "telegram-bot-token",
    kind: "credential_detected",
    label: "telegram_bot_token",
    keywords: [":a"],
    // bot id, `:`, 35 characters (AA… in practice)
    pattern: /\b(\d{5,16}:A[A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])/,
    names: ["telegram"],
    strictFormat: true,
  },
  {
    id: "twilio-api-key",
    kind: "credential_detected",
    label: "twilio_api_key",
    keywords: ["sk"],
    pattern: /\b(SK[0-9a-f]{32})(?![0-9a-zA-Z])/,
  },
  {
    id: "twilio-auth-token",
    kind: "credential_detected",
    label: "twilio_auth_token",
    keywords: ["twilio"],
    pattern: new RegExp(
      String.raw`twilio[\w.-]{0,20}?token${ASSIGN}(?:\\?["'])?([a-f0-9]{32})(?![a-f0-9])`,
      "i",
    ),
  },
  {
    id: "sendgrid-api-key",
    kind: "credential_detected",
    label: "sendgrid_api_key",
    keywords: ["sg."],
    // SG., 22 characters, `.`, 43 characters
    pattern: /\b(SG\.[A-Za-z0-9_=-]{22}[.=_-][A-Za-z0-9_=-]{43})(?![A-Za-z0-9_=-])/,
  },
  {
    id: "mailgun-api-key",
    kind: "credential_detected",
    label: "mailgun_api_key",
    keywords: ["mailgun", "api:key-"],
    pattern: /\b(key-[0-9a-f]{32})(?![0-9a-f])/,
  },
  {
    id: "stripe-secret-key",
    kind: "credential_detected",
    label: "stripe_secret_key",
    keywords: ["k_live_", "k_prod_"],
    pattern: /\b(sk_(?:live|prod)_[A-Za-z0-9]{24,247})(?![A-Za-z0-9])/,
  },
  {
    id: "stripe-restricted-key",
    kind: "credential_detected",
    label: "stripe_restricted_key",
    keywords: ["k_live_", "k_prod_"],
    pattern: /\b(rk_(?:live|prod)_[A-Za-z0-9]{24,247})(?![A-Za-z0-9])/,
  },
  {
    id: "stripe-test-key",
    kind: "credential_detected",
    label: "stripe_test_key",
    keywords: ["k_test_"],
    pattern: /\b([sr]k_test_[A-Za-z0-9]{24,247})(?![A-Za-z0-9])/,
  },
  {
    id: "stripe-webhook-secret",
    kind: "credential_detected",
    label: "stripe_webhook_secret",
    keywords: ["whsec_"],
    pattern: /\b(whsec_[A-Za-z0-9+/]{32,64})(?![A-Za-z0-9+/])/,
  },
  {
    id: "square-access-token",
    kind: "credential_detected",
    label: "square_access_token",
    keywords: ["sq0", "eaaa"],
    // sq0atp- (legacy) or EAAA and 60 characters
    pattern: /\b(sq0atp-[A-Za-z0-9_-]{22}|EAAA[A-Za-z0-9_+=-]{40,60})(?![A-Za-z0-9_+=-])/,
  },
  {
    id: "square-oauth-secret",
    kind: "credential_detected",
    label: "square_oauth_secret",
    keywords: ["sq0"],
    pattern: /\b(sq0csp-[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/,
  },
  {
    id: "shopify-token",
    kind: "credential_detected",
    label: "shopify_token",
    keywords: ["shp"],
    pattern: /\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?![a-fA-F0-9])/,
  },
  // --- Developer platforms ---------------------------------------------------
  {
    id: "datadog-api-key",
    kind: "credential_detected",
    label: "datadog_api_key",
    keywords: ["datadog", "dd_a", "dd-a"],
    pattern: new RegExp(
      String.raw`(?:datadog|dd)[_-]?api[_-]?key${ASSIGN}(?:\\?["'])?([a-f0-9]{32})(?![a-f0-9])`,
      "i",
    ),
  },
  {
    id: "datadog-app-key",
    kind: "credential_detected",
    label: "datadog_app_key",
    keywords: ["datadog", "dd_a", "dd-a"],
    pattern: new RegExp(
      String
        .raw`(?:datadog|dd)[_-]?app(?:lication)?[_-]?key${ASSIGN}(?:\\?["'])?([a-f0-9]{40})(?![a-f0-9])`,
      "i",
    ),
  },
  {
    id: "sentry-auth-token",
    kind: "credential_detected",
    label: "sentry_auth_token",
    keywords: ["sntry"],
    // org tokens: base64 JSON claims, `_`, 43 characters; user tokens: 64 hex
    pattern:
      /\b(sntrys_eyJ[A-Za-z0-9+/=]{20,400}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])|sntryu_[a-f0-9]{64}(?![a-f0-9]))/,
  },
  {
    id: "new-relic-user-api-key",
    kind: "credential_detected",
    label: "new_relic_user_api_key",
    keywords: ["nrak-"],
    pattern: /\b(NRAK-[A-Z0-9]{27})(?![A-Z0-9])/,
  },
  {
    id: "dynatrace-api-token",
    kind: "credential_detected",
    label: "dynatrace_api_token",
    keywords: ["dt0c01."],
    pattern: /\b(dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})(?![A-Za-z0-9])/,
  },
  {
    id: "grafana-token",
    kind: "credential_detected",
    label: "grafana_token",
    keywords: ["gl"],
    pattern:
      /\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "linear-api-key",
    kind: "credential_detected",
    label: "linear_api_key",
    keywords: ["lin_"],
    pattern: /\b(lin_(?:api|oauth)_[A-Za-z0-9]{40,64})(?![A-Za-z0-9])/,
  },
  {
    id: "notion-token",
    kind: "credential_detected",
    label: "notion_token",
    keywords: ["secret", "ntn_"],
    pattern: /\b(secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "figma-token",
    kind: "credential_detected",
    label: "figma_token",
    keywords: ["figd_"],
    pattern: /\b(figd_[A-Za-z0-9_-]{40,64})(?![A-Za-z0-9_-])/,
  },
  {
    id: "posthog-personal-api-key",
    kind: "credential_detected",
    label: "posthog_personal_api_key",
    keywords: ["phx_"],
    pattern: /\b(phx_[A-Za-z0-9]{43})(?![A-Za-z0-9])/,
  },
  {
    id: "supabase-access-token",
    kind: "credential_detected",
    label: "supabase_access_token",
    keywords: ["sbp_"],
    pattern: /\b(sbp_[a-f0-9]{40})(?![a-f0-9])/,
  },
  {
    id: "planetscale-token",
    kind: "credential_detected",
    label: "planetscale_token",
    keywords: ["pscale_"],
    pattern: /\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64})/,
  },
  {
    id: "mapbox-secret-token",
    kind: "credential_detected",
    label: "mapbox_secret_token",
    keywords: ["eyj"],
    pattern: /\b(sk\.eyJ[A-Za-z0-9_-]{50,400}\.[A-Za-z0-9_-]{20,100})(?![A-Za-z0-9_-])/,
  },
  {
    id: "doppler-token",
    kind: "credential_detected",
    label: "doppler_token",
    keywords: ["dp."],
    pattern: /\b(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})(?![A-Za-z0-9])/,
  },
  {
    id: "vault-token",
    kind: "credential_detected",
    label: "vault_token",
    keywords: ["hv"],
    pattern: /\b(hv[sbr]\.[A-Za-z0-9_-]{24,1024})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "onepassword-service-account-token",
    kind: "credential_detected",
    label: "onepassword_service_account_token",
    keywords: ["eyj"],
    pattern: /\b(ops_eyJ[A-Za-z0-9+/=_-]{100,1200})/,
  },
  {
    id: "age-secret-key",
    kind: "credential_detected",
    label: "age_secret_key",
    keywords: ["age-secret-key-1"],
    pattern: /\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})(?![A-Z0-9])/,
  },
  // --- More vendors, each from its documented token format ---------------------
  {
    id: "aws-bedrock-api-key",
    kind: "credential_detected",
    label: "aws_bedrock_api_key",
    keywords: ["absk", "bedrock-api-key-"],
    pattern:
      /\b(ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{40,300}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&?_.-]{0,2000})/,
    // long-term: ABSK + base64 of `BedrockAPIKey-…`; short-term: base64 of `bedrock.amazonaws.com…`
  },
  {
    id: "alibaba-access-key-id",
    kind: "credential_detected",
    label: "alibaba_access_key_id",
    keywords: ["ltai"],
    pattern: /\b(LTAI[A-Za-z0-9]{12,20})(?![A-Za-z0-9])/,
    minEntropy: 3,
  },
  {
    id: "onepassword-secret-key",
    kind: "credential_detected",
    label: "onepassword_secret_key",
    keywords: ["a3-"],
    pattern:
      /\b(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})(?![A-Z0-9])/,
  },
  {
    id: "airtable-token",
    kind: "credential_detected",
    label: "airtable_token",
    keywords: ["pat"],
    pattern: /\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "authress-key",
    kind: "credential_detected",
    label: "authress_key",
    keywords: [".acc"],
    pattern:
      /\b((?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120})/,
  },
  {
    id: "clickhouse-cloud-secret",
    kind: "credential_detected",
    label: "clickhouse_cloud_secret",
    keywords: ["4b1d"],
    pattern: /\b(4b1d[A-Za-z0-9]{38})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "clojars-token",
    kind: "credential_detected",
    label: "clojars_token",
    keywords: ["clojars_"],
    pattern: /\b(CLOJARS_[a-z0-9]{60,70})(?![a-z0-9])/,
  },
  {
    id: "cloudflare-origin-ca-key",
    kind: "credential_detected",
    label: "cloudflare_origin_ca_key",
    keywords: ["v1.0-"],
    pattern: /\b(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})(?![a-f0-9])/,
  },
  {
    id: "duffel-token",
    kind: "credential_detected",
    label: "duffel_token",
    keywords: ["duffel_"],
    pattern: /\b(duffel_(?:test|live)_[A-Za-z0-9_=-]{43})(?![A-Za-z0-9_=-])/,
  },
  {
    id: "easypost-api-key",
    kind: "credential_detected",
    label: "easypost_api_key",
    keywords: ["ezak", "eztk"],
    pattern: /\b(EZ[AT]K[A-Za-z0-9]{54})(?![A-Za-z0-9])/,
  },
  {
    id: "facebook-access-token",
    kind: "credential_detected",
    label: "facebook_access_token",
    keywords: ["eaa"],
    pattern: /\b(EAA[A-Z][A-Za-z0-9]{90,400})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "flutterwave-key",
    kind: "credential_detected",
    label: "flutterwave_key",
    keywords: ["flwseck", "flwpubk"],
    pattern: /\b(FLW(?:SECK|PUBK)(?:_TEST)?-[a-f0-9]{12}(?:[a-f0-9]{20}-X)?)(?![A-Za-z0-9])/,
  },
  {
    id: "flyio-token",
    kind: "credential_detected",
    label: "flyio_token",
    keywords: ["fo1_", "fm1", "fm2"],
    pattern: /\b(fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,4096}={0,3})(?![A-Za-z0-9_-])/,
    // fo1_ (organisation), fm1/fm2 macaroons, written after `FlyV1 ` in a header
  },
  {
    id: "frameio-token",
    kind: "credential_detected",
    label: "frameio_token",
    keywords: ["fio-u-"],
    pattern: /\b(fio-u-[A-Za-z0-9_=-]{64})(?![A-Za-z0-9_=-])/,
  },
  {
    id: "gitlab-session-cookie",
    kind: "credential_detected",
    label: "gitlab_session_cookie",
    keywords: ["_gitlab_session="],
    pattern: /_gitlab_session=([0-9a-z]{32})(?![0-9a-z])/,
  },
  {
    id: "grafana-api-key",
    kind: "credential_detected",
    label: "grafana_api_key",
    keywords: ["eyjrijoi"],
    pattern: /\b(eyJrIjoi[A-Za-z0-9]{70,400}={0,2})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "harness-token",
    kind: "credential_detected",
    label: "harness_token",
    keywords: ["pat.", "sat."],
    pattern: /\b((?:pat|sat)\.[A-Za-z0-9_-]{22}\.[a-z0-9]{24}\.[a-z0-9]{20})(?![A-Za-z0-9])/,
  },
  {
    id: "infracost-api-key",
    kind: "credential_detected",
    label: "infracost_api_key",
    keywords: ["ico-"],
    pattern: /\b(ico-[A-Za-z0-9]{32})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "intra42-client-secret",
    kind: "credential_detected",
    label: "intra42_client_secret",
    keywords: ["s-s4t2"],
    pattern: /\b(s-s4t2(?:ud|af)-[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "maxmind-license-key",
    kind: "credential_detected",
    label: "maxmind_license_key",
    keywords: ["_mmk"],
    pattern: /\b([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![A-Za-z0-9])/,
  },
  {
    id: "octopus-deploy-api-key",
    kind: "credential_detected",
    label: "octopus_deploy_api_key",
    keywords: ["api-"],
    pattern: /\b(API-[A-Z0-9]{26})(?![A-Z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "openshift-user-token",
    kind: "credential_detected",
    label: "openshift_user_token",
    keywords: ["sha256~"],
    pattern: /(?<![A-Za-z0-9_-])(sha256~[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/,
  },
  {
    id: "prefect-api-key",
    kind: "credential_detected",
    label: "prefect_api_key",
    keywords: ["pnu_"],
    pattern: /\b(pnu_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "pulumi-access-token",
    kind: "credential_detected",
    label: "pulumi_access_token",
    keywords: ["pul-"],
    pattern: /\b(pul-[a-f0-9]{40})(?![a-f0-9])/,
  },
  {
    id: "readme-api-key",
    kind: "credential_detected",
    label: "readme_api_key",
    keywords: ["rdme_"],
    pattern: /\b(rdme_[a-z0-9]{70})(?![a-z0-9])/,
  },
  {
    id: "scalingo-api-token",
    kind: "credential_detected",
    label: "scalingo_api_token",
    keywords: ["tk-us-"],
    pattern: /\b(tk-us-[A-Za-z0-9_-]{48})(?![A-Za-z0-9_-])/,
  },
  {
    id: "sendinblue-api-key",
    kind: "credential_detected",
    label: "brevo_api_key",
    keywords: ["xkeysib-"],
    pattern: /\b(xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})(?![A-Za-z0-9])/,
  },
  {
    id: "settlemint-token",
    kind: "credential_detected",
    label: "settlemint_token",
    keywords: ["sm_pat_", "sm_aat_", "sm_sat_"],
    pattern: /\b(sm_(?:pat|aat|sat)_[A-Za-z0-9]{16})(?![A-Za-z0-9])/,
  },
  {
    id: "shippo-api-token",
    kind: "credential_detected",
    label: "shippo_api_token",
    keywords: ["shippo_"],
    pattern: /\b(shippo_(?:live|test)_[a-f0-9]{40})(?![a-f0-9])/,
  },
  {
    id: "slack-legacy-bot-token",
    kind: "credential_detected",
    label: "slack_bot_token",
    keywords: ["xoxb-"],
    pattern: /\b(xoxb-[0-9]{8,14}-[A-Za-z0-9]{18,34})(?![A-Za-z0-9-])/,
    // the two-part legacy form (team id, 24 characters)
  },
  {
    id: "slack-config-token",
    kind: "credential_detected",
    label: "slack_config_token",
    keywords: ["xoxe"],
    pattern: /\b(xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{100,400})(?![A-Za-z0-9])/,
    // configuration access (xoxe.xoxp-1-…) and refresh (xoxe-1-…) tokens
  },
  {
    id: "sourcegraph-access-token",
    kind: "credential_detected",
    label: "sourcegraph_access_token",
    keywords: ["sgp_"],
    pattern: /\b(sgp_(?:(?:local|[A-Fa-f0-9]{16})_)?[A-Fa-f0-9]{40})(?![A-Za-z0-9])/,
  },
  {
    id: "microsoft-teams-webhook",
    kind: "credential_detected",
    label: "teams_webhook_url",
    keywords: ["webhook.office.com"],
    pattern: /\.webhook\.office\.com\/webhookb2\/([A-Za-z0-9@\/_-]{60,400})/,
  },
  {
    id: "docker-config-base64",
    kind: "credential_detected",
    label: "docker_registry_auth",
    keywords: ["eyjhdxroci6"],
    pattern: /\b(eyJhdXRocyI6[A-Za-z0-9+/]{20,8192}={0,2})/,
    // base64 of a `.dockerconfigjson` (`{"auths":…`)
  },
  {
    id: "jwt-base64",
    kind: "credential_detected",
    label: "jwt",
    keywords: ["zxlk"],
    pattern: /\b(ZXlK[A-Za-z0-9+/_-]{40,8192}={0,2})(?![A-Za-z0-9+/_-])/,
    // base64 of `eyJ…`: a JSON Web Token wrapped once more
    verify: "base64-jwt",
  },
  // --- Keys and tokens in standard formats -----------------------------------
  {
    id: "private-key",
    kind: "credential_detected",
    label: "private_key",
    keywords: ["private"],
    pattern: new RegExp(
      String.raw`-----BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[nrt])*${PEM_BODY}`,
    ),
    minLength: 40,
  },
  {
    id: "putty-private-key",
    kind: "credential_detected",
    label: "putty_private_key",
    keywords: ["private"],
    pattern: /Private-Lines:\s*\d+(?:\s|\\[nr])+([A-Za-z0-9+/=](?:[A-Za-z0-9+/=]|\s|\\[nr])*)/,
    requires: /PuTTY-User-Key-File/,
    minLength: 40,
  },
  {
    id: "jwt",
    kind: "credential_detected",
    label: "jwt",
    keywords: ["eyj"],
    pattern:
      /\b(eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096})(?![A-Za-z0-9_-])/,
    // The jwt.io documentation example ("John Doe").
    allow: [/\.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ\./],
  },
  // --- Credentials found by their context -----------------------------------
  {
    id: "database-url",
    kind: "credential_detected",
    label: "database_url",
    keywords: ["://"],
    pattern:
      /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|cockroachdb|clickhouse|couchdbs?|neo4j(?:\+s)?|oracle|snowflake)(?:\+[a-z0-9]+)?:\/\/[^\s:/?#@"'<>]{0,100}:([^\s@/?#"'<>]{1,200})@/i,
    minLength: 4,
    allow: [...placeholderSecrets, ...defaultPasswords],
  },
  {
    id: "url-basic-auth",
    kind: "credential_detected",
    label: "url_basic_auth",
    keywords: ["://"],
    pattern:
      /\b(?:https?|ftps?|sftp|wss?|git|ssh|svn|smtps?|imaps?|ldaps?)(?:\+[a-z]+)?:\/\/[^\s:/?#@"'<>]{1,100}:([^\s@/?#"'<>]{1,200})@[A-Za-z0-9[]/i,
    // Passwords of one to three characters are documentation (`https://a:b@host`).
    minLength: 4,
    allow: [...placeholderSecrets, ...defaultPasswords],
  },
  {
    id: "curl-basic-auth",
    kind: "credential_detected",
    label: "curl_basic_auth",
    keywords: ["curl"],
    // -u user:pass, --user "user":'pass', -u ":pass"; the user may be an email address
    pattern:
      /(?<![\w-])(?:-u\s*|--user[=\s]\s*)(?:\\?["'])?[^\s:"']{0,100}(?:\\?["'])?:(?:\\?["'])?([^\s"']{4,200})/,
    allow: [...placeholderSecrets, ...defaultPasswords, /^\d+$/, /^[a-z]{1,12}$/],
  },
  {
    id: "bearer-token",
    kind: "credential_detected",
    label: "bearer_token",
    keywords: ["bearer"],
    pattern: /\b[Bb]earer\s+([A-Za-z0-9._~+/-]{8,4096}=*)/,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "basic-auth-header",
    kind: "credential_detected",
    label: "basic_auth_header",
    keywords: ["authorization"],
    pattern:
      /authorization(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?Basic\s+([A-Za-z0-9+/]{8,1024}={0,2})/i,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "authorization-header",
    kind: "credential_detected",
    label: "authorization_header",
    keywords: ["authorization"],
    pattern:
      /[Aa]uthorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:(?:Token|token|ApiKey|Api-Key|Api-Token|apikey|SSWS|Key|key)[ \t]+)?([A-Za-z0-9._~+/=-]{8,4096})/,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "mysql-cli-password",
    kind: "credential_detected",
    label: "mysql_password",
    keywords: ["mysql", "mariadb"],
    pattern:
      /\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]{0,200}?\s-p([^\s"'-][^\s"']{3,199})/,
    allow: [...placeholderSecrets, ...defaultPasswords],
  },
  {
    id: "docker-config-auth",
    kind: "credential_detected",
    label: "docker_registry_auth",
    keywords: ["auths"],
    key: /^(?:auth|identitytoken|registrytoken)$/i,
    pattern: /^\s*([A-Za-z0-9+/=._-]{12,4096})\s*$/,
    requires: /"auths"\s*:/,
    minEntropy: 3,
  },
  {
    id: "login-password-flag",
    kind: "credential_detected",
    label: "generic_password",
    keywords: ["login", "sshpass"],
    pattern:
      /\b(?:(?:docker|podman|buildah|skopeo|helm registry|oras) login|sshpass)\b[^\n|;&]{0,200}?\s-p\s*(?:\\?["'])?([^\s"'-][^\s"']{3,199})/,
    allow: [...placeholderSecrets, ...defaultPasswords],
  },
  {
    id: "cli-password-flag",
    kind: "credential_detected",
    label: "generic_password",
    keywords: ["pass"],
    pattern: /(?<![\w-])--(?:[a-z]+-)?pass(?:word|wd)?\s+(?:\\?["'])?([^\s"'-][^\s"']{7,199})/,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "cli-token-flag",
    kind: "credential_detected",
    label: "generic_token",
    keywords: ["token", "api-key", "apikey", "secret"],
    pattern:
      /(?<![\w-])--(?:[a-z]+-)?(?:token|api-?key|secret|client-secret)\s+(?:\\?["'])?([^\s"'-][^\s"']{7,199})/,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  // --- Secrets found by the name they are given (last: a vendor rule names a secret first) --
  {
    id: "generic-assignment",
    kind: "credential_detected",
    label: "generic_secret",
    keywords: SECRET_NAME_KEYWORDS,
    pattern: new RegExp(
      String.raw`(?<key>${SECRET_NAME}[\w.$-]{0,40}?)${DECLARED_TYPE}${ASSIGN}${VALUE}`,
      "i",
    ),
    keyName: "any",
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "kubernetes-secret-data",
    kind: "credential_detected",
    label: "kubernetes_secret",
    keywords: ["secret"],
    // A value under a Kubernetes Secret's `data:` is base64 of the secret,
    // one line or a YAML block scalar; line-numbered as a Read shows it.
    pattern:
      /^[ \t]*(?:\d+\t)?[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]*(?:\d+\t)?[ \t]+)?\\?["']?([A-Za-z0-9+/]{12,4096}={0,2})\\?["']?[ \t]*$/m,
    requires: /kind:[ \t]*\\?["']?secret\b/i,
    minEntropy: 3,
  },
  {
    id: "generic-xml-element",
    kind: "credential_detected",
    label: "generic_secret",
    keywords: SECRET_NAME_KEYWORDS,
    // <apiToken>…</apiToken>, the value on its own line or not (line-numbered in a Read)
    pattern:
      /<(?<key>[A-Za-z_][\w.:-]{0,60})(?:\s[^<>]{0,200})?>\s{0,40}(?:\d{1,7}\t\s{0,40})?([^<>\s]{8,200})\s{0,40}(?:\d{1,7}\t\s{0,40})?<\//,
    keyName: "any",
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "generic-key-value-pair",
    kind: "credential_detected",
    label: "generic_secret",
    keywords: ["value"],
    // <add key="ClearTextPassword" value="…" /> (NuGet, .NET appSettings),
    // `- name: API_TOKEN` / `value: …` (Kubernetes env), {"name": …, "value": …}
    pattern: new RegExp(
      String
        .raw`\b(?:key|name)\\?["']?[ \t]*[:=][ \t]*\\?["']?(?<key>[\w.-]{1,80})\\?["']?[ \t]*,?[ \t]*(?:\r?\n[ \t-]*(?:\d+\t)?[ \t-]*)?\\?["']?value\\?["']?[ \t]*[:=][ \t]*${VALUE}`,
      "i",
    ),
    keyName: "any",
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "generic-json-property",
    kind: "credential_detected",
    label: "generic_secret",
    keywords: SECRET_NAME_KEYWORDS,
    key: /pass|pwd|token|secret|key|cred|auth/i,
    pattern: /^\s*(\S{8,200})\s*$/,
    keyName: "any",
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
];

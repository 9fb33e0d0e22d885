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
    examples: {
      matches: ["ACCAX86E5H79CGTRKAS0"],
      nonMatches: ["ACCAX86E5H79CGTRKAS"],
    },
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
    examples: {
      matches: ["aws_secret_access_key = FAKEw9Lq2Xr7Tn4Vb8Kc1Mz5Hd3Js6Pg0Ye7Wu2Q"],
      nonMatches: ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
    },
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
    examples: {
      matches: ['{"SecretAccessKey": "FAKEw9Lq2Xr7Tn4Vb8Kc1Mz5Hd3Js6Pg0Ye7Wu2Q"}'],
      nonMatches: ['{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}'],
    },
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
    examples: {
      matches: [
        "aws_session_token = FwoGZXIvYXdzEFAKq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2QeTzW8rNpXvBs4Hk6Jd9Lf2Gc1Vq5Ym7Ux0Zt3Ra8Ew6Pn4Ko2Ii9Uh1Og7Yf5Td3Rs",
      ],
      nonMatches: ["aws_session_token = ${AWS_SESSION_TOKEN}"],
    },
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
    examples: {
      matches: ["AIzad3Kg6H1uMsG-NZq3cQOE4zWHoWHXxv69Ba2"],
      nonMatches: ["AIzad3Kg6H1uMsG-NZq3cQOE4zWHoWHXxv69Ba"],
    },
    keywords: ["aiza"],
    pattern: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/,
    minEntropy: 3,
  },
  {
    id: "gcp-service-account",
    kind: "credential_detected",
    label: "gcp_service_account",
    examples: {
      matches: [
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2QeTz\\n-----END PRIVATE KEY-----\\n"}',
      ],
      nonMatches: ['{"type": "service_account", "private_key": ""}'],
    },
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
    examples: {
      matches: [
        '{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2QeTz\\n-----END PRIVATE KEY-----\\n"}',
      ],
      nonMatches: ['{"type":"service_account","private_key":""}'],
    },
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
    examples: {
      matches: ["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"],
      nonMatches: ["GOCSPX-kLFdq_VinIuKbSTm_ll2qx9ahOv"],
    },
    keywords: ["gocspx-"],
    pattern: /\b(GOCSPX-[A-Za-z0-9_-]{28})(?![A-Za-z0-9_-])/,
  },
  {
    id: "google-oauth-access-token",
    kind: "credential_detected",
    label: "google_oauth_access_token",
    examples: {
      matches: ["ya29.N2NLYcYR93qCUJVac7CzPbHgubBnzr"],
      nonMatches: ["ya29.N2NLYcYR93qCUJVac7CzPbHgubBnz"],
    },
    keywords: ["ya29."],
    pattern: /\b(ya29\.[A-Za-z0-9_-]{30,2048})/,
    minEntropy: 3.5,
  },
  {
    id: "google-oauth-refresh-token",
    kind: "credential_detected",
    label: "google_oauth_refresh_token",
    examples: {
      matches: ["1//0NunkanM9tTrPoynQ_da-E4wF0NMaLJMWlhTnffs2"],
      nonMatches: ["1//0NunkanM9tTrPoynQ_da-E4wF0NMaLJMWlhTnffs"],
    },
    keywords: ["1//0"],
    pattern: /\b(1\/\/0[A-Za-z0-9_-]{40,512})/,
    minEntropy: 3.5,
  },
  {
    id: "azure-storage-account-key",
    kind: "credential_detected",
    label: "azure_storage_account_key",
    examples: {
      matches: [
        "AccountKey=0K1QRUEG6gcYYxfzEjwW+JCS05Swh/Q6EJ6THS+pYl4ZhBlO6b7WDe1QbVGXSqVG0xttRPVwkBFS2+W6qJ0u0/==",
      ],
      nonMatches: [
        "ccountKey=0K1QRUEG6gcYYxfzEjwW+JCS05Swh/Q6EJ6THS+pYl4ZhBlO6b7WDe1QbVGXSqVG0xttRPVwkBFS2+W6qJ0u0/==",
      ],
    },
    keywords: ["accountkey="],
    pattern: /AccountKey=([A-Za-z0-9+/]{86}==)/,
  },
  {
    id: "azure-shared-access-key",
    kind: "credential_detected",
    label: "azure_shared_access_key",
    examples: {
      matches: ["SharedAccessKey=9nmOH/GszInYa8EgVJwdhJmIAH0/2SM4oMRuIibSh9="],
      nonMatches: ["SharedAccessKeyName=RootManageSharedAccessKey"],
    },
    keywords: ["sharedaccesskey="],
    pattern: /SharedAccessKey=([A-Za-z0-9+/]{42,44}=)/,
  },
  {
    id: "azure-sas-token",
    kind: "credential_detected",
    label: "azure_sas_token",
    examples: {
      matches: [
        "https://acct.blob.core.windows.net/logs?sv=2022-11-02&ss=b&sp=r&sig=FAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2Qe%3D",
      ],
      nonMatches: [
        "https://acct.blob.core.windows.net/logs?sig=FAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2Qe%3D",
      ],
    },
    keywords: ["sig="],
    pattern: /[?&;]sig=([A-Za-z0-9%+/]{40,120}(?:%3D|=){0,2})/,
    requires: /[?&;]sv=\d{4}-\d{2}-\d{2}/,
  },
  {
    id: "azure-client-secret",
    kind: "credential_detected",
    label: "azure_client_secret",
    examples: {
      matches: ["N_e0Q~RycS6nXLpd_aEcKzhQHyv.FwxNO7syg"],
      nonMatches: ["N_e0Q~RycS6nXLpd_aEcKzhQHyv.FwxNO7sy"],
    },
    keywords: ["q~"],
    pattern:
      /(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/,
    minEntropy: 3.5,
  },
  {
    id: "digitalocean-token",
    kind: "credential_detected",
    label: "digitalocean_token",
    examples: {
      matches: ["dor_v1_4a66444087b15fce6eaea6494f56cac5809f359c4d73e271a488f57c1d94246c"],
      nonMatches: ["dor_v1_4a66444087b15fce6eaea6494f56cac5809f359c4d73e271a488f57c1d94246"],
    },
    keywords: ["_v1_"],
    pattern: /\b(do[opr]_v1_[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "heroku-api-key",
    kind: "credential_detected",
    label: "heroku_api_key",
    examples: {
      matches: ["HRKU-AAzxBiBO--xLEeF22PQLCV1xaOUcPT_8t0Q43pkXPe4uEcVykP00daKSfMlo"],
      nonMatches: ["HRKU-AAzxBiBO--xLEeF22PQLCV1xaOUcPT_8t0Q43pkXPe4uEcVykP00daKSfMl"],
    },
    keywords: ["hrku-"],
    pattern: /\b(HRKU-AA[0-9A-Za-z_-]{58})(?![0-9A-Za-z_-])/,
  },
  {
    id: "heroku-api-key-uuid",
    kind: "credential_detected",
    label: "heroku_api_key",
    examples: {
      matches: ["HEROKU_API_KEY=5f3a9c1e-7b2d-4e8f-9a6c-1d3b5e7f9a2c"],
      nonMatches: ["HEROKU_APP_ID=5f3a9c1e-7b2d-4e8f-9a6c-1d3b5e7f9a2c"],
    },
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
    examples: {
      matches: ["CLOUDFLARE_API_TOKEN=FAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku"],
      nonMatches: ["CLOUDFLARE_API_TOKEN=${{ secrets.CF_TOKEN }}"],
    },
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
    examples: {
      matches: ["dapibc435588ede360a82d4fb4e71c034042"],
      nonMatches: ["dapibc435588ede360a82d4fb4e71c03404"],
    },
    keywords: ["dapi"],
    pattern: /\b(dapi[a-f0-9]{32}(?:-\d)?)(?![a-f0-9])/,
    minEntropy: 3,
  },
  // --- Source hosting and package registries --------------------------------
  {
    id: "github-pat",
    kind: "credential_detected",
    label: "github_pat",
    examples: {
      matches: ["ghp_Kh0XzKIUoMJLUwIz2Ra1krYKa6DvzolI03g0"],
      nonMatches: ["ghp_Kh0XzKIUoMJLUwIz2Ra1krYKa6DvzolI03g"],
    },
    keywords: ["ghp_"],
    pattern: /\b(ghp_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-oauth-token",
    kind: "credential_detected",
    label: "github_oauth_token",
    examples: {
      matches: ["gho_6anGmD30bxAbdPmFYz3MKBcDNddmxhfBdOnU"],
      nonMatches: ["gho_6anGmD30bxAbdPmFYz3MKBcDNddmxhfBdOn"],
    },
    keywords: ["gho_"],
    pattern: /\b(gho_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-user-token",
    kind: "credential_detected",
    label: "github_user_token",
    examples: {
      matches: ["ghu_fyXa6iJ0x3ITnPKRtofZxQrvMTKOCdw3BinO"],
      nonMatches: ["ghu_fyXa6iJ0x3ITnPKRtofZxQrvMTKOCdw3Bin"],
    },
    keywords: ["ghu_"],
    pattern: /\b(ghu_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-app-token",
    kind: "credential_detected",
    label: "github_app_token",
    examples: {
      matches: ["ghs_241egE7aoap88w4LkdLDQpMKjXjhafKTEfqD"],
      nonMatches: ["ghs_241egE7aoap88w4LkdLDQpMKjXjhafKTEfq"],
    },
    keywords: ["ghs_"],
    pattern: /\b(ghs_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "github-refresh-token",
    kind: "credential_detected",
    label: "github_refresh_token",
    examples: {
      matches: ["ghr_NPquntRWJ6ly66hthWSYrTa9vXP9jMwC71Fh"],
      nonMatches: ["ghr_NPquntRWJ6ly66hthWSYrTa9vXP9jMwC71F"],
    },
    keywords: ["ghr_"],
    pattern: /\b(ghr_[A-Za-z0-9]{36,76})(?![A-Za-z0-9])/,
  },
  {
    id: "github-fine-grained-pat",
    kind: "credential_detected",
    label: "github_fine_grained_pat",
    examples: {
      matches: [
        "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",
      ],
      nonMatches: [
        "github_pat_tk6JQKJh9AAsENH8HWwk5Ibd4DSuoDgoyisci0tsDiHLhImw4Z3rLQ9Y1PXsPFGG5Yc_6cv60l1YYdzUs",
      ],
    },
    keywords: ["github_pat_"],
    // 22 characters, `_`, 59 characters: 82 after the prefix
    pattern: /\b(github_pat_[A-Za-z0-9_]{82})(?![A-Za-z0-9_])/,
  },
  {
    id: "gitlab-pat",
    kind: "credential_detected",
    label: "gitlab_pat",
    examples: {
      matches: ["glpat-oD7wPFSnZMpvqUGSAEER"],
      nonMatches: ["glpat-oD7wPFSnZMpvqUGSAEE"],
    },
    keywords: ["gl"],
    pattern: /\b(glpat-[A-Za-z0-9_-]{20,64}(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?)(?![A-Za-z0-9_-])/,
    minEntropy: 3,
  },
  {
    id: "gitlab-token",
    kind: "credential_detected",
    label: "gitlab_token",
    examples: {
      matches: ["glrt-WB_6S-zVYk4TrxvCt98g"],
      nonMatches: ["glrt-WB_6S-zVYk4TrxvCt98"],
    },
    keywords: ["gl"],
    pattern:
      /\b((?:gldt|glrt|glcbt|glptt|glft|glimt|glagent|glsoat|gloas|glffct)-[A-Za-z0-9_-]{20,64})(?![A-Za-z0-9_-])/,
    minEntropy: 3,
  },
  {
    id: "gitlab-runner-registration-token",
    kind: "credential_detected",
    label: "gitlab_runner_registration_token",
    examples: {
      matches: ["GR1348941O8OiyyvxSRq_no34Ax5u"],
      nonMatches: ["GR1348941O8OiyyvxSRq_no34Ax5"],
    },
    keywords: ["gr1348941"],
    pattern: /\b(GR1348941[A-Za-z0-9_-]{20})(?![A-Za-z0-9_-])/,
  },
  {
    id: "npm-access-token",
    kind: "credential_detected",
    label: "npm_access_token",
    examples: {
      matches: ["npm_3195S94L0lhXyZPnCDWzuMzjUGstW9CH9jZ9"],
      nonMatches: ["npm_3195S94L0lhXyZPnCDWzuMzjUGstW9CH9jZ"],
    },
    keywords: ["npm_"],
    pattern: /\b(npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
    minEntropy: 3,
  },
  {
    id: "pypi-upload-token",
    kind: "credential_detected",
    label: "pypi_upload_token",
    examples: {
      matches: ["pypi-AgEIcHlwaS5vcmc3om2j9sHmYELjVX-FXO0XVikZ529Bh6J3vRhID4ZVdLzLuSXyz"],
      nonMatches: ["pypi-AgEIcHlwaS5vcmc3om2j9sHmYELjVX-FXO0XVikZ529Bh6J3vRhID4ZVdLzLuSXy"],
    },
    keywords: ["pypi-ageichlwas5vcmc"],
    pattern: /\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,400})/,
  },
  {
    id: "rubygems-api-key",
    kind: "credential_detected",
    label: "rubygems_api_key",
    examples: {
      matches: ["rubygems_552eb2ef6dee56de1c008a18a24a21a26a1fe1d74f520ae3"],
      nonMatches: ["rubygems_552eb2ef6dee56de1c008a18a24a21a26a1fe1d74f520ae"],
    },
    keywords: ["rubygems_"],
    pattern: /\b(rubygems_[a-f0-9]{48})(?![a-f0-9])/,
  },
  {
    id: "docker-hub-token",
    kind: "credential_detected",
    label: "docker_hub_token",
    examples: {
      matches: ["dckr_pat_LNlYyj1GEr0a3wfhshIeGARPdQH"],
      nonMatches: ["dckr_pat_LNlYyj1GEr0a3wfhshIeGARPdQ"],
    },
    keywords: ["dckr_"],
    pattern: /\b(dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,40})(?![A-Za-z0-9_-])/,
  },
  {
    id: "atlassian-api-token",
    kind: "credential_detected",
    label: "atlassian_api_token",
    examples: {
      matches: [
        "ATCTT3isqWWOWSH75q0V131GVvXGpXa27zonqOD743C0-bdG8n7av1jfeTey3QDz73q3=MXPpSrQd8xcjScc5umUtE4VvKT=MYBPVnoNoz",
      ],
      nonMatches: [
        "ATCTT3isqWWOWSH75q0V131GVvXGpXa27zonqOD743C0-bdG8n7av1jfeTey3QDz73q3=MXPpSrQd8xcjScc5umUtE4VvKT=MYBPVnoNo",
      ],
    },
    keywords: ["tt3"],
    pattern: /\b(AT[ACS]TT3[A-Za-z0-9_=-]{100,300})/,
  },
  {
    id: "postman-api-key",
    kind: "credential_detected",
    label: "postman_api_key",
    examples: {
      matches: ["PMAK-e7bd401decae3f5ba2600861-4c3d386f1c556e44f3885b8da705719b54"],
      nonMatches: ["PMAK-e7bd401decae3f5ba2600861-4c3d386f1c556e44f3885b8da705719b5"],
    },
    keywords: ["pmak-"],
    pattern: /\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})(?![a-f0-9])/,
  },
  {
    id: "terraform-cloud-token",
    kind: "credential_detected",
    label: "terraform_cloud_token",
    examples: {
      matches: [
        "NKyIOW2oNwDnvo.atlasv1.SNAC2IYcR7Bj2B8oOt4tU66Y66c9iUjASYjMxO7Srwn2Gm4N95BLgeEt_H-w",
      ],
      nonMatches: [
        "NKyIOW2oNwDnvo.atlasv1.SNAC2IYcR7Bj2B8oOt4tU66Y66c9iUjASYjMxO7Srwn2Gm4N95BLgeEt_H-",
      ],
    },
    keywords: [".atlasv1."],
    pattern: /\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,90})/,
  },
  // --- AI providers ---------------------------------------------------------
  {
    id: "anthropic-api-key",
    kind: "credential_detected",
    label: "anthropic_api_key",
    examples: {
      matches: [
        "sk-ant-api17-b4Pl8GYcl2FbNx4JbT3Rw1LeHMiZbF-tsa_eaBPm-KwupQF-mIKpFwJPMfb1wEzteoCZmXWwAe0DaMh6",
      ],
      nonMatches: [
        "sk-ant-api17-b4Pl8GYcl2FbNx4JbT3Rw1LeHMiZbF-tsa_eaBPm-KwupQF-mIKpFwJPMfb1wEzteoCZmXWwAe0DaMh",
      ],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-ant-api\d{2}-[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])/,
  },
  {
    id: "anthropic-admin-key",
    kind: "credential_detected",
    label: "anthropic_admin_key",
    examples: {
      matches: [
        "sk-ant-admin61-1TTqz1rAQvQqhHxcIJwlyc6hRunf5uWe6wc9xlWTA1210OVKzS-e7-zjzCMke6N9lwQRUSxjNFdOzkjY",
      ],
      nonMatches: [
        "sk-ant-admin61-1TTqz1rAQvQqhHxcIJwlyc6hRunf5uWe6wc9xlWTA1210OVKzS-e7-zjzCMke6N9lwQRUSxjNFdOzkj",
      ],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-ant-admin\d{2}-[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])/,
  },
  {
    id: "anthropic-oauth-token",
    kind: "credential_detected",
    label: "anthropic_oauth_token",
    examples: {
      matches: [
        "sk-ant-odt07--FgVYl_dLFrpV4gLAUnRzaaJKJlNz8LNLzAXwE8HeRBCo-DOMrqjV-wWKqgxA_rQj0oSVxJstYkPJC2e",
      ],
      nonMatches: [
        "sk-ant-odt07--FgVYl_dLFrpV4gLAUnRzaaJKJlNz8LNLzAXwE8HeRBCo-DOMrqjV-wWKqgxA_rQj0oSVxJstYkPJC2",
      ],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-ant-o[a-z]t\d{2}-[A-Za-z0-9_-]{80,120})(?![A-Za-z0-9_-])/,
  },
  {
    id: "openai-project-key",
    kind: "credential_detected",
    label: "openai_project_key",
    examples: {
      matches: ["sk-proj-SaX6l2HWpX2jbYsCY7_IXqxs9JjSUgDIGtX4l8pw"],
      nonMatches: ["sk-proj-SaX6l2HWpX2jbYsCY7_IXqxs9JjSUgDIGtX4l8p"],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-proj-[A-Za-z0-9_-]{40,250})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "openai-service-account-key",
    kind: "credential_detected",
    label: "openai_service_account_key",
    examples: {
      matches: ["sk-svcacct-VkbYccqRstWUVml1bqJYplDDKDzCiktrRwg1OVDx"],
      nonMatches: ["sk-svcacct-VkbYccqRstWUVml1bqJYplDDKDzCiktrRwg1OVD"],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-svcacct-[A-Za-z0-9_-]{40,250})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "openai-admin-key",
    kind: "credential_detected",
    label: "openai_admin_key",
    examples: {
      matches: ["sk-admin-ENiLTofcbb9Y0nNjVpr4H2YFvnxhE0DU-_kNu0er"],
      nonMatches: ["sk-admin-ENiLTofcbb9Y0nNjVpr4H2YFvnxhE0DU-_kNu0e"],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-admin-[A-Za-z0-9_-]{40,250})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "openai-api-key",
    kind: "credential_detected",
    label: "openai_api_key",
    examples: {
      matches: ["sk-T3BlbkFJLzFmcFp2d0ILnMLc"],
      nonMatches: ["sk-T3BlbkFJLzFmcFp2d0ILnML"],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-[A-Za-z0-9_-]{0,100}?T3BlbkFJ[A-Za-z0-9_-]{16,100})(?![A-Za-z0-9_-])/,
  },
  {
    id: "openrouter-api-key",
    kind: "credential_detected",
    label: "openrouter_api_key",
    examples: {
      matches: ["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"],
      nonMatches: ["sk-or-v1-0a6b192eed302505097c5317ff9297368eea70c73de96cc107e0d72e6ab3512"],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-or-v1-[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "huggingface-token",
    kind: "credential_detected",
    label: "huggingface_token",
    examples: {
      matches: ["hf_gXodpoNqHEFqeUp3xjeN0DTEhOUpMF41Gf"],
      nonMatches: [
        "hf_gXodpoNqHEFqeUp3xjeN0DTEhOUpMF41G",
        "hf_servingcell_meas_results_and_neighbour_list_t",
      ],
    },
    keywords: ["hf_", "api_org_"],
    // mixed case: a C identifier such as `hf_servingcell…` is not one
    pattern: /\b((?:hf|api_org)_(?=[a-z0-9]*[A-Z])[A-Za-z0-9]{34,40})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "xai-api-key",
    kind: "credential_detected",
    label: "xai_api_key",
    examples: {
      matches: [
        "xai-3MHYLadcfGb2xVimGuwakcHEGlBWWF7zosFYqqkbAUz4mAfaosIVuVQz4EITieq6dDJ3F0SroFr5pz0j",
      ],
      nonMatches: [
        "xai-3MHYLadcfGb2xVimGuwakcHEGlBWWF7zosFYqqkbAUz4mAfaosIVuVQz4EITieq6dDJ3F0SroFr5pz0",
      ],
    },
    keywords: ["xai-"],
    pattern: /\b(xai-[A-Za-z0-9]{80})(?![A-Za-z0-9])/,
  },
  {
    id: "groq-api-key",
    kind: "credential_detected",
    label: "groq_api_key",
    examples: {
      matches: ["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"],
      nonMatches: ["gsk_6bYsI5hSip3yNESW1RDNZzidtblY0jhhBmqfHIqUgnEW0UMkFAd"],
    },
    keywords: ["gsk_"],
    pattern: /\b(gsk_[A-Za-z0-9]{52})(?![A-Za-z0-9])/,
  },
  {
    id: "replicate-api-token",
    kind: "credential_detected",
    label: "replicate_api_token",
    examples: {
      matches: ["r8_mZqdwWpw3SEjX0WOYmJBMghIxtUtXT55rSaFa"],
      nonMatches: ["r8_mZqdwWpw3SEjX0WOYmJBMghIxtUtXT55rSaF"],
    },
    keywords: ["r8_"],
    pattern: /\b(r8_[A-Za-z0-9]{37})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "perplexity-api-key",
    kind: "credential_detected",
    label: "perplexity_api_key",
    examples: {
      matches: ["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"],
      nonMatches: ["pplx-RPQFSdsZPxwnkHv5Co2YDkZikZfKO8wFpEW3tpR7dqPmpsG"],
    },
    keywords: ["pplx-"],
    pattern: /\b(pplx-[A-Za-z0-9]{48})(?![A-Za-z0-9])/,
  },
  {
    id: "nvidia-api-key",
    kind: "credential_detected",
    label: "nvidia_api_key",
    examples: {
      matches: ["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"],
      nonMatches: ["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"],
    },
    keywords: ["nvapi-"],
    pattern: /\b(nvapi-[A-Za-z0-9_-]{64})(?![A-Za-z0-9_-])/,
  },
  {
    id: "langsmith-api-key",
    kind: "credential_detected",
    label: "langsmith_api_key",
    examples: {
      matches: ["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"],
      nonMatches: ["lsv2_pt_9c2996cb7cd73814d070dcfefea28efc_8b84dc0c4"],
    },
    keywords: ["lsv2_"],
    pattern: /\b(lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})(?![a-f0-9])/,
  },
  {
    id: "langfuse-secret-key",
    kind: "credential_detected",
    label: "langfuse_secret_key",
    examples: {
      matches: ["sk-lf-25ba16a8-b2d2-2efd-68c9-540e44cf5b91"],
      nonMatches: ["sk-lf-25ba16a8-b2d2-2efd-68c9-540e44cf5b9"],
    },
    keywords: ["sk-"],
    pattern: /\b(sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-f])/,
  },
  // --- Messaging and payments ------------------------------------------------
  {
    id: "slack-bot-token",
    kind: "credential_detected",
    label: "slack_bot_token",
    examples: {
      matches: ["xoxb-7000362025-7986567065-UrBEgaAfEExVwhN2NyJaavoT"],
      nonMatches: ["xoxb-7000362025-7986567065-UrBEgaAfEExVwhN2NyJaavo"],
    },
    keywords: ["xox"],
    pattern: /\b(xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24,34})(?![A-Za-z0-9])/,
  },
  {
    id: "slack-user-token",
    kind: "credential_detected",
    label: "slack_user_token",
    examples: {
      matches: ["xoxp-5182939305-0153223757-6568053783-Rvjj4y7qe4s4mz403e1Zhf6Cr094"],
      nonMatches: ["xoxp-5182939305-0153223757-6568053783-Rvjj4y7qe4s4mz403e1Zhf6Cr09"],
    },
    keywords: ["xox"],
    pattern: /\b(xox[pe]-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{28,34})(?![A-Za-z0-9])/,
  },
  {
    id: "slack-app-token",
    kind: "credential_detected",
    label: "slack_app_token",
    examples: {
      matches: [
        "xapp-7-CXGFK8DM1-4045753670-ad11af06db083175ccfbe6d2372678308f27bf550f480293ed88ffd2d03e",
      ],
      nonMatches: [
        "xapp-7-CXGFK8DM1-4045753670-ad11af06db083175ccfbe6d2372678308f27bf550f480293ed88ffd2d03",
      ],
    },
    keywords: ["xapp-"],
    pattern: /\b(xapp-\d-[A-Z0-9]{9,12}-\d{10,14}-[a-f0-9]{60,70})(?![a-f0-9])/,
  },
  {
    id: "slack-legacy-token",
    kind: "credential_detected",
    label: "slack_legacy_token",
    examples: {
      matches: ["xoxa-gLhS1NGXWdtk"],
      nonMatches: ["xoxa-gLhS1NGXWdt"],
    },
    keywords: ["xox"],
    pattern: /\b(xox[aros]-(?:\d-)?[A-Za-z0-9-]{12,200})/,
    minEntropy: 3,
  },
  {
    id: "slack-webhook-url",
    kind: "credential_detected",
    label: "slack_webhook_url",
    examples: {
      matches: ["hooks.slack.com/services/8qiFAK4ppi2IBH0j06vA"],
      nonMatches: ["hooks.slack.com/services/8qiFAK4ppi2IBH0j06v"],
    },
    keywords: ["hooks.slack.com"],
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9+/_-]{20,150})/,
    minEntropy: 3,
  },
  {
    id: "discord-webhook-url",
    kind: "credential_detected",
    label: "discord_webhook_url",
    examples: {
      matches: [
        "discord.com/api/webhooks/26392186166024171/bgZ-D3aWDsWCZHsyX8Tj7l7HGVyXaf2nG1X9o4WHbaEsnPhOeo-tVunYTeHo",
      ],
      nonMatches: [
        "discord.com/api/webhooks/26392186166024171/bgZ-D3aWDsWCZHsyX8Tj7l7HGVyXaf2nG1X9o4WHbaEsnPhOeo-tVunYTeH",
      ],
    },
    keywords: ["discord"],
    pattern: /discord(?:app)?\.com\/api\/webhooks\/\d{17,20}\/([A-Za-z0-9_-]{60,80})/,
  },
  {
    id: "discord-bot-token",
    kind: "credential_detected",
    label: "discord_bot_token",
    examples: {
      matches: [
        "DISCORD_BOT_TOKEN=MTA5ODc2NTQzMjEwOTg3NjU0.GhFAKE.q7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7",
      ],
      nonMatches: ["discord snowflake MTA5ODc2NTQzMjEwOTg3NjU0.GhFAKE"],
    },
    keywords: ["discord"],
    pattern:
      /\b([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "telegram-bot-token",
    kind: "credential_detected",
    label: "telegram_bot_token",
    examples: {
      matches: ["09891:AFFHanxGFwGpjROFpul3eq1ok80u8caq6nO"],
      nonMatches: ["09891:AFFHanxGFwGpjROFpul3eq1ok80u8caq6n"],
    },
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
    examples: {
      matches: ["SKdf7a8015840c97e43fe6d069004b3525"],
      nonMatches: ["SKdf7a8015840c97e43fe6d069004b352"],
    },
    keywords: ["sk"],
    pattern: /\b(SK[0-9a-f]{32})(?![0-9a-zA-Z])/,
  },
  {
    id: "twilio-auth-token",
    kind: "credential_detected",
    label: "twilio_auth_token",
    examples: {
      matches: ["TWILIO_AUTH_TOKEN=c4e1f8a27b9d03e65f1a8c4b7d2e9f06"],
      nonMatches: ["TWILIO_AUTH_TOKEN=your_auth_token"],
    },
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
    examples: {
      matches: ["SG.cjpFXOkam_gvtSj4VtGRFk-58o5dETddk8mPQAAVFv-YFpt09aTkgyIlLe9_uqnTd0"],
      nonMatches: ["SG.cjpFXOkam_gvtSj4VtGRFk-58o5dETddk8mPQAAVFv-YFpt09aTkgyIlLe9_uqnTd"],
    },
    keywords: ["sg."],
    // SG., 22 characters, `.`, 43 characters
    pattern: /\b(SG\.[A-Za-z0-9_=-]{22}[.=_-][A-Za-z0-9_=-]{43})(?![A-Za-z0-9_=-])/,
  },
  {
    id: "mailgun-api-key",
    kind: "credential_detected",
    label: "mailgun_api_key",
    examples: {
      matches: ["MAILGUN_API_KEY=key-c4e1f8a27b9d03e65f1a8c4b7d2e9f06"],
      nonMatches: ["mailgun: key-c4e1f8a27b9d03e6"],
    },
    keywords: ["mailgun", "api:key-"],
    pattern: /\b(key-[0-9a-f]{32})(?![0-9a-f])/,
  },
  {
    id: "stripe-secret-key",
    kind: "credential_detected",
    label: "stripe_secret_key",
    examples: {
      matches: ["sk_prod_quMFF7CQiLJc7CuEQQfwtzds"],
      nonMatches: ["sk_prod_quMFF7CQiLJc7CuEQQfwtzd"],
    },
    keywords: ["k_live_", "k_prod_"],
    pattern: /\b(sk_(?:live|prod)_[A-Za-z0-9]{24,247})(?![A-Za-z0-9])/,
  },
  {
    id: "stripe-restricted-key",
    kind: "credential_detected",
    label: "stripe_restricted_key",
    examples: {
      matches: ["rk_live_JMzjqZFnyrWtNe7Ov0N5UWsg"],
      nonMatches: ["rk_live_JMzjqZFnyrWtNe7Ov0N5UWs"],
    },
    keywords: ["k_live_", "k_prod_"],
    pattern: /\b(rk_(?:live|prod)_[A-Za-z0-9]{24,247})(?![A-Za-z0-9])/,
  },
  {
    id: "stripe-test-key",
    kind: "credential_detected",
    label: "stripe_test_key",
    examples: {
      matches: ["sk_test_OooOYL1gVvLDNEUCW0e1XYCM"],
      nonMatches: ["sk_test_OooOYL1gVvLDNEUCW0e1XYC"],
    },
    keywords: ["k_test_"],
    pattern: /\b([sr]k_test_[A-Za-z0-9]{24,247})(?![A-Za-z0-9])/,
  },
  {
    id: "stripe-webhook-secret",
    kind: "credential_detected",
    label: "stripe_webhook_secret",
    examples: {
      matches: ["whsec_QXbOOs5PF3eulzY+uij0kKuugHB5ha+g"],
      nonMatches: ["whsec_QXbOOs5PF3eulzY+uij0kKuugHB5ha+"],
    },
    keywords: ["whsec_"],
    pattern: /\b(whsec_[A-Za-z0-9+/]{32,64})(?![A-Za-z0-9+/])/,
  },
  {
    id: "square-access-token",
    kind: "credential_detected",
    label: "square_access_token",
    examples: {
      matches: ["sq0atp-fsfindNJNjQIMOYkpG1NTr"],
      nonMatches: ["sq0atp-fsfindNJNjQIMOYkpG1NT"],
    },
    keywords: ["sq0", "eaaa"],
    // sq0atp- (legacy) or EAAA and 60 characters
    pattern: /\b(sq0atp-[A-Za-z0-9_-]{22}|EAAA[A-Za-z0-9_+=-]{40,60})(?![A-Za-z0-9_+=-])/,
  },
  {
    id: "square-oauth-secret",
    kind: "credential_detected",
    label: "square_oauth_secret",
    examples: {
      matches: ["sq0csp-aTx4NMot2ulFi-6yXxUHJ7iFZAAei-B4qoBC753DpUj"],
      nonMatches: ["sq0csp-aTx4NMot2ulFi-6yXxUHJ7iFZAAei-B4qoBC753DpU"],
    },
    keywords: ["sq0"],
    pattern: /\b(sq0csp-[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/,
  },
  {
    id: "shopify-token",
    kind: "credential_detected",
    label: "shopify_token",
    examples: {
      matches: ["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"],
      nonMatches: ["shppa_8E6BDFdE066C4C0A7cB68aE2860C96F"],
    },
    keywords: ["shp"],
    pattern: /\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?![a-fA-F0-9])/,
  },
  // --- Developer platforms ---------------------------------------------------
  {
    id: "datadog-api-key",
    kind: "credential_detected",
    label: "datadog_api_key",
    examples: {
      matches: ["DD_API_KEY=c4e1f8a27b9d03e65f1a8c4b7d2e9f06"],
      nonMatches: ["DD_API_KEY=<DATADOG_API_KEY>"],
    },
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
    examples: {
      matches: ["DATADOG_APP_KEY=c4e1f8a27b9d03e65f1a8c4b7d2e9f06a1b2c3d4"],
      nonMatches: ["DATADOG_APP_KEY=$DD_APP_KEY"],
    },
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
    examples: {
      matches: ["sntrys_eyJCtLUoOV+MqZl80TCp8bu_kOJ03MsEyqXPIQQdVmLIkqvL/qNP+Dl6QzwR5UP+Rt6"],
      nonMatches: ["sntrys_eyJCtLUoOV+MqZl80TCp8bu_kOJ03MsEyqXPIQQdVmLIkqvL/qNP+Dl6QzwR5UP+Rt"],
    },
    keywords: ["sntry"],
    // org tokens: base64 JSON claims, `_`, 43 characters; user tokens: 64 hex
    pattern:
      /\b(sntrys_eyJ[A-Za-z0-9+/=]{20,400}_[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])|sntryu_[a-f0-9]{64}(?![a-f0-9]))/,
  },
  {
    id: "new-relic-user-api-key",
    kind: "credential_detected",
    label: "new_relic_user_api_key",
    examples: {
      matches: ["NRAK-SLOMLJP3IDLHP23NY4ZAOUC13JA"],
      nonMatches: ["NRAK-SLOMLJP3IDLHP23NY4ZAOUC13J"],
    },
    keywords: ["nrak-"],
    pattern: /\b(NRAK-[A-Z0-9]{27})(?![A-Z0-9])/,
  },
  {
    id: "dynatrace-api-token",
    kind: "credential_detected",
    label: "dynatrace_api_token",
    examples: {
      matches: [
        "dt0c01.eiHgtnbDEa6mWygndGwnsNMQ.DN6U7etFLH9qrYsiKEtgGUrBrv3iEKxEJC09UB0Ie6leQ3iE9K1vuqkcMur5zbAM",
      ],
      nonMatches: [
        "dt0c01.eiHgtnbDEa6mWygndGwnsNMQ.DN6U7etFLH9qrYsiKEtgGUrBrv3iEKxEJC09UB0Ie6leQ3iE9K1vuqkcMur5zbA",
      ],
    },
    keywords: ["dt0c01."],
    pattern: /\b(dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})(?![A-Za-z0-9])/,
  },
  {
    id: "grafana-token",
    kind: "credential_detected",
    label: "grafana_token",
    examples: {
      matches: ["glc_fAPodXQgc9l+zIpg6FUWbEHWxiOSMTjh"],
      nonMatches: ["glc_fAPodXQgc9l+zIpg6FUWbEHWxiOSMTj"],
    },
    keywords: ["gl"],
    pattern:
      /\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "linear-api-key",
    kind: "credential_detected",
    label: "linear_api_key",
    examples: {
      matches: ["lin_api_3NyVxyd0sNozN3wcWZJMrkHLKs7nVJcQbkkyuVLC"],
      nonMatches: ["lin_api_3NyVxyd0sNozN3wcWZJMrkHLKs7nVJcQbkkyuVL"],
    },
    keywords: ["lin_"],
    pattern: /\b(lin_(?:api|oauth)_[A-Za-z0-9]{40,64})(?![A-Za-z0-9])/,
  },
  {
    id: "notion-token",
    kind: "credential_detected",
    label: "notion_token",
    examples: {
      matches: ["secret_nBEnRKnnFZR26BHU5b1pF7vt5BeoVgHDq7h16Xxc7TT"],
      nonMatches: ["secret_nBEnRKnnFZR26BHU5b1pF7vt5BeoVgHDq7h16Xxc7T"],
    },
    keywords: ["secret", "ntn_"],
    pattern: /\b(secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "figma-token",
    kind: "credential_detected",
    label: "figma_token",
    examples: {
      matches: ["figd_NvwYGm1vbMZ23iEvsG5OyKoA56wziNVhKHjeJzRS"],
      nonMatches: ["figd_NvwYGm1vbMZ23iEvsG5OyKoA56wziNVhKHjeJzR"],
    },
    keywords: ["figd_"],
    pattern: /\b(figd_[A-Za-z0-9_-]{40,64})(?![A-Za-z0-9_-])/,
  },
  {
    id: "posthog-personal-api-key",
    kind: "credential_detected",
    label: "posthog_personal_api_key",
    examples: {
      matches: ["phx_hkjLDWFip1WUigXUsBJ9Mynf44N1WAp1FdlRFCuYCky"],
      nonMatches: ["phx_hkjLDWFip1WUigXUsBJ9Mynf44N1WAp1FdlRFCuYCk"],
    },
    keywords: ["phx_"],
    pattern: /\b(phx_[A-Za-z0-9]{43})(?![A-Za-z0-9])/,
  },
  {
    id: "supabase-access-token",
    kind: "credential_detected",
    label: "supabase_access_token",
    examples: {
      matches: ["sbp_c7234773d8671d15ad04bf77088f6b694e3dc941"],
      nonMatches: ["sbp_c7234773d8671d15ad04bf77088f6b694e3dc94"],
    },
    keywords: ["sbp_"],
    pattern: /\b(sbp_[a-f0-9]{40})(?![a-f0-9])/,
  },
  {
    id: "planetscale-token",
    kind: "credential_detected",
    label: "planetscale_token",
    examples: {
      matches: ["pscale_oauth_meH1Pf0FmeceQ9E4JGKN-CMRbQ9sctp1"],
      nonMatches: ["pscale_oauth_meH1Pf0FmeceQ9E4JGKN-CMRbQ9sctp"],
    },
    keywords: ["pscale_"],
    pattern: /\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64})/,
  },
  {
    id: "mapbox-secret-token",
    kind: "credential_detected",
    label: "mapbox_secret_token",
    examples: {
      matches: ["sk.eyJ101FxNjxJXXeNk1q0db_fTaYbPkiHhVsdI9ej0-pqrVVbFWQz1.4bugEoBw4o6DsoL2K9gS"],
      nonMatches: ["sk.eyJ101FxNjxJXXeNk1q0db_fTaYbPkiHhVsdI9ej0-pqrVVbFWQz1.4bugEoBw4o6DsoL2K9g"],
    },
    keywords: ["eyj"],
    pattern: /\b(sk\.eyJ[A-Za-z0-9_-]{50,400}\.[A-Za-z0-9_-]{20,100})(?![A-Za-z0-9_-])/,
  },
  {
    id: "doppler-token",
    kind: "credential_detected",
    label: "doppler_token",
    examples: {
      matches: ["dp.scim.Q98VvU6UMSw1kyDkbCC4bsOQL5oFlEvSCn9kAEFA"],
      nonMatches: ["dp.scim.Q98VvU6UMSw1kyDkbCC4bsOQL5oFlEvSCn9kAEF"],
    },
    keywords: ["dp."],
    pattern: /\b(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})(?![A-Za-z0-9])/,
  },
  {
    id: "vault-token",
    kind: "credential_detected",
    label: "vault_token",
    examples: {
      matches: ["hvb.5we0qJUWpXbYDECIP4okduGz"],
      nonMatches: ["hvb.5we0qJUWpXbYDECIP4okduG"],
    },
    keywords: ["hv"],
    pattern: /\b(hv[sbr]\.[A-Za-z0-9_-]{24,1024})(?![A-Za-z0-9_-])/,
    minEntropy: 3.5,
  },
  {
    id: "onepassword-service-account-token",
    kind: "credential_detected",
    label: "onepassword_service_account_token",
    examples: {
      matches: [
        "ops_eyJDejdarlm4C5KOMUwwDpyb807tGRrABvN/7SB+cN=6-KZmwKh-P7dxawrb2kiLVQGNZ4rt4q6=R27x2N-XTyHRhAHzze7dlHeZ/o6",
      ],
      nonMatches: [
        "ops_eyJDejdarlm4C5KOMUwwDpyb807tGRrABvN/7SB+cN=6-KZmwKh-P7dxawrb2kiLVQGNZ4rt4q6=R27x2N-XTyHRhAHzze7dlHeZ/o",
      ],
    },
    keywords: ["eyj"],
    pattern: /\b(ops_eyJ[A-Za-z0-9+/=_-]{100,1200})/,
  },
  {
    id: "age-secret-key",
    kind: "credential_detected",
    label: "age_secret_key",
    examples: {
      matches: ["AGE-SECRET-KEY-18EGV6EHK9DH06DCZ0KFAY7MPK3T2SY8GFQKNSSKWE8HZEHHTUL7DSCHSJ2"],
      nonMatches: ["AGE-SECRET-KEY-18EGV6EHK9DH06DCZ0KFAY7MPK3T2SY8GFQKNSSKWE8HZEHHTUL7DSCHSJ"],
    },
    keywords: ["age-secret-key-1"],
    pattern: /\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})(?![A-Z0-9])/,
  },
  // --- More vendors, each from its documented token format ---------------------
  {
    id: "aws-bedrock-api-key",
    kind: "credential_detected",
    label: "aws_bedrock_api_key",
    examples: {
      matches: ["ABSKQmVkcm9ja0FQSUtleS9rRr9gbCGzUHqfiByPxKArtp7+MKFsI54KesoLVc"],
      nonMatches: [
        "ABSKQmVkcm9ja0FQSUtleS9rRr9gbCGzUHqfiByPxKArtp7+MKFsI54KesoLV",
        "ABSKQmVkcm9ja0FQSUtleS1EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE",
      ],
    },
    keywords: ["absk", "bedrock-api-key-"],
    pattern:
      /\b(ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{40,300}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&?_.-]{0,2000})/,
    // AWS documentation samples (`…EXAMPLE…`)
    allow: [/EXAMPLE/],
    // long-term: ABSK + base64 of `BedrockAPIKey-…`; short-term: base64 of `bedrock.amazonaws.com…`
  },
  {
    id: "alibaba-access-key-id",
    kind: "credential_detected",
    label: "alibaba_access_key_id",
    examples: {
      matches: ["LTAIyDAJgJdicYyR"],
      nonMatches: ["LTAIyDAJgJdicYy"],
    },
    keywords: ["ltai"],
    pattern: /\b(LTAI[A-Za-z0-9]{12,20})(?![A-Za-z0-9])/,
    minEntropy: 3,
  },
  {
    id: "onepassword-secret-key",
    kind: "credential_detected",
    label: "onepassword_secret_key",
    examples: {
      matches: ["A3-XHX0CK-LT96JS8QTTE-YFIJA-BLQ5I-N9CSH"],
      nonMatches: ["A3-XHX0CK-LT96JS8QTTE-YFIJA-BLQ5I-N9CS"],
    },
    keywords: ["a3-"],
    pattern:
      /\b(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})(?![A-Z0-9])/,
  },
  {
    id: "airtable-token",
    kind: "credential_detected",
    label: "airtable_token",
    examples: {
      matches: [
        "patorMaCj0ZzIYBhL.03b7f4ebc447be6b937cd7566d4abf44dd10cb151ef12a7e7366577740ccbec2",
      ],
      nonMatches: [
        "patorMaCj0ZzIYBhL.03b7f4ebc447be6b937cd7566d4abf44dd10cb151ef12a7e7366577740ccbec",
      ],
    },
    keywords: ["pat"],
    pattern: /\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "authress-key",
    kind: "credential_detected",
    label: "authress_key",
    examples: {
      matches: ["scauth_UYAy4.WuTS.acc-oVOTCphsoO.OtN1SRbKOSL6UWjPLKnT+Gg5i18boy"],
      nonMatches: ["scauth_UYAy4.WuTS.acc-oVOTCphsoO.OtN1SRbKOSL6UWjPLKnT+Gg5i18bo"],
    },
    keywords: [".acc"],
    pattern:
      /\b((?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120})/,
  },
  {
    id: "clickhouse-cloud-secret",
    kind: "credential_detected",
    label: "clickhouse_cloud_secret",
    examples: {
      matches: ["4b1dBGnz6f9p3GXscpIrWsGqaP65GbMXfj6n2d2x8f"],
      nonMatches: ["4b1dBGnz6f9p3GXscpIrWsGqaP65GbMXfj6n2d2x8"],
    },
    keywords: ["4b1d"],
    pattern: /\b(4b1d[A-Za-z0-9]{38})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "clojars-token",
    kind: "credential_detected",
    label: "clojars_token",
    examples: {
      matches: ["CLOJARS_z6gvmf6tr1s55rvnv3qw0pmipr9kmjqncs2a4b30gzew1y12r51zptlmoy6i"],
      nonMatches: ["CLOJARS_z6gvmf6tr1s55rvnv3qw0pmipr9kmjqncs2a4b30gzew1y12r51zptlmoy6"],
    },
    keywords: ["clojars_"],
    pattern: /\b(CLOJARS_[a-z0-9]{60,70})(?![a-z0-9])/,
  },
  {
    id: "cloudflare-origin-ca-key",
    kind: "credential_detected",
    label: "cloudflare_origin_ca_key",
    examples: {
      matches: [
        "v1.0-27771dd131d1393100ecee4a-3992dee5ee3cf98c740b7e92bc9c15f595ff8dea81c3747467b2b758bcaa1ad61d32afeac6f742856e533de1cfed3220a9f33cf6dd6da91b73ac41eafd535a1d106754a0a2ef2a4c88",
      ],
      nonMatches: [
        "v1.0-27771dd131d1393100ecee4a-3992dee5ee3cf98c740b7e92bc9c15f595ff8dea81c3747467b2b758bcaa1ad61d32afeac6f742856e533de1cfed3220a9f33cf6dd6da91b73ac41eafd535a1d106754a0a2ef2a4c8",
      ],
    },
    keywords: ["v1.0-"],
    pattern: /\b(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})(?![a-f0-9])/,
  },
  {
    id: "duffel-token",
    kind: "credential_detected",
    label: "duffel_token",
    examples: {
      matches: ["duffel_test_CggjV_wI8BwtN31ceyJj=hq-maUFWzz-dhDg_3oV1wF"],
      nonMatches: ["duffel_test_CggjV_wI8BwtN31ceyJj=hq-maUFWzz-dhDg_3oV1w"],
    },
    keywords: ["duffel_"],
    pattern: /\b(duffel_(?:test|live)_[A-Za-z0-9_=-]{43})(?![A-Za-z0-9_=-])/,
  },
  {
    id: "easypost-api-key",
    kind: "credential_detected",
    label: "easypost_api_key",
    examples: {
      matches: ["EZTKDyLqQPCWEHYctMQJeGWmUh7NeWRj2Ujdp0dag0oB1xJWZbpJZHU1cZ"],
      nonMatches: ["EZTKDyLqQPCWEHYctMQJeGWmUh7NeWRj2Ujdp0dag0oB1xJWZbpJZHU1c"],
    },
    keywords: ["ezak", "eztk"],
    pattern: /\b(EZ[AT]K[A-Za-z0-9]{54})(?![A-Za-z0-9])/,
  },
  {
    id: "facebook-access-token",
    kind: "credential_detected",
    label: "facebook_access_token",
    examples: {
      matches: [
        "EAADwKpIemsttyxxr6PaPCHPMFBRJFdT7KB7hmjsHe1ExQcCbW2SiBHvDg74waLO5l8CLl8z9Hi5j51Tns6aE0EAX5GdUA",
      ],
      nonMatches: [
        "EAADwKpIemsttyxxr6PaPCHPMFBRJFdT7KB7hmjsHe1ExQcCbW2SiBHvDg74waLO5l8CLl8z9Hi5j51Tns6aE0EAX5GdU",
      ],
    },
    keywords: ["eaa"],
    pattern: /\b(EAA[A-Z][A-Za-z0-9]{90,400})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "flutterwave-key",
    kind: "credential_detected",
    label: "flutterwave_key",
    examples: {
      matches: ["FLWSECK-c38df9a77a84"],
      nonMatches: ["FLWSECK-c38df9a77a8"],
    },
    keywords: ["flwseck", "flwpubk"],
    pattern: /\b(FLW(?:SECK|PUBK)(?:_TEST)?-[a-f0-9]{12}(?:[a-f0-9]{20}-X)?)(?![A-Za-z0-9])/,
  },
  {
    id: "flyio-token",
    kind: "credential_detected",
    label: "flyio_token",
    examples: {
      matches: [
        "fm2_8t2dYsteLZVsF4Wc8d8u3bOOtCJ07H4yx7VhZVsSJZqN94TvzmgAVPd4pMuX1Tq27tMM2hpeM6CkS3AVhElP+M3fqGC06Iz3gdax",
      ],
      nonMatches: [
        "fm2_8t2dYsteLZVsF4Wc8d8u3bOOtCJ07H4yx7VhZVsSJZqN94TvzmgAVPd4pMuX1Tq27tMM2hpeM6CkS3AVhElP+M3fqGC06Iz3gda",
      ],
    },
    keywords: ["fo1_", "fm1", "fm2"],
    pattern: /\b(fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,4096}={0,3})(?![A-Za-z0-9_-])/,
    // fo1_ (organisation), fm1/fm2 macaroons, written after `FlyV1 ` in a header
  },
  {
    id: "frameio-token",
    kind: "credential_detected",
    label: "frameio_token",
    examples: {
      matches: ["fio-u-nH7UATFylVXvIJOaGoUU9uAnAZytvLG3ftvj6uXKukb39ulz86jlzRW2oS1veb1H"],
      nonMatches: ["fio-u-nH7UATFylVXvIJOaGoUU9uAnAZytvLG3ftvj6uXKukb39ulz86jlzRW2oS1veb1"],
    },
    keywords: ["fio-u-"],
    pattern: /\b(fio-u-[A-Za-z0-9_=-]{64})(?![A-Za-z0-9_=-])/,
  },
  {
    id: "gitlab-session-cookie",
    kind: "credential_detected",
    label: "gitlab_session_cookie",
    examples: {
      matches: ["_gitlab_session=2yduj8qiz18rkwmjmws76yrczpzlft81"],
      nonMatches: ["_gitlab_session=2yduj8qiz18rkwmjmws76yrczpzlft8"],
    },
    keywords: ["_gitlab_session="],
    pattern: /_gitlab_session=([0-9a-z]{32})(?![0-9a-z])/,
  },
  {
    id: "grafana-api-key",
    kind: "credential_detected",
    label: "grafana_api_key",
    examples: {
      matches: ["eyJrIjoieisU3Qg9IjjCgurlaoTq4Gv1ebMgHctnPw3cIzPuC7yKXGl7bWqorFGemQhg1VMRKRKL0f"],
      nonMatches: ["eyJrIjoieisU3Qg9IjjCgurlaoTq4Gv1ebMgHctnPw3cIzPuC7yKXGl7bWqorFGemQhg1VMRKRKL0"],
    },
    keywords: ["eyjrijoi"],
    pattern: /\b(eyJrIjoi[A-Za-z0-9]{70,400}={0,2})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "harness-token",
    kind: "credential_detected",
    label: "harness_token",
    examples: {
      matches: ["sat.fByc93wBMg44CEnb4FtLUM.274lpakz6afdwhxd4lcpgukl.0bkq538w9ct72sp0dv5h"],
      nonMatches: ["sat.fByc93wBMg44CEnb4FtLUM.274lpakz6afdwhxd4lcpgukl.0bkq538w9ct72sp0dv5"],
    },
    keywords: ["pat.", "sat."],
    pattern: /\b((?:pat|sat)\.[A-Za-z0-9_-]{22}\.[a-z0-9]{24}\.[a-z0-9]{20})(?![A-Za-z0-9])/,
  },
  {
    id: "infracost-api-key",
    kind: "credential_detected",
    label: "infracost_api_key",
    examples: {
      matches: ["ico-r7BzsNtrvvF5IDCIqP0kCRvbeVi3Rg0s"],
      nonMatches: [
        "ico-r7BzsNtrvvF5IDCIqP0kCRvbeVi3Rg0",
        "http://assets.example.com/video_box.ico-7a388b69018576d24b59331fd60aab0c.png",
      ],
    },
    keywords: ["ico-"],
    // not a file name such as `video_box.ico-<hash>.png`
    pattern: /(?<![\w.-])(ico-[A-Za-z0-9]{32})(?![A-Za-z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "intra42-client-secret",
    kind: "credential_detected",
    label: "intra42_client_secret",
    examples: {
      matches: ["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"],
      nonMatches: ["s-s4t2ud-e143fa74dd38224313e5d771731d56533ab4fba52759cb91527e29bc6f72f47"],
    },
    keywords: ["s-s4t2"],
    pattern: /\b(s-s4t2(?:ud|af)-[a-f0-9]{64})(?![a-f0-9])/,
  },
  {
    id: "maxmind-license-key",
    kind: "credential_detected",
    label: "maxmind_license_key",
    examples: {
      matches: ["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"],
      nonMatches: ["VKUbCO_fIuWyINpIpkr9T1ijWx6IEQG8dDGQ_mm"],
    },
    keywords: ["_mmk"],
    pattern: /\b([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![A-Za-z0-9])/,
  },
  {
    id: "octopus-deploy-api-key",
    kind: "credential_detected",
    label: "octopus_deploy_api_key",
    examples: {
      matches: ["API-Y2JAEI5EGOIPRCCLLGLPKHTNGL"],
      nonMatches: ["API-Y2JAEI5EGOIPRCCLLGLPKHTNG"],
    },
    keywords: ["api-"],
    pattern: /\b(API-[A-Z0-9]{26})(?![A-Z0-9])/,
    minEntropy: 3.5,
  },
  {
    id: "openshift-user-token",
    kind: "credential_detected",
    label: "openshift_user_token",
    examples: {
      matches: ["sha256~FtMI7u5bok6IpC7GExZA8F_b--JB-j0Uw9mtTCBQBXe"],
      nonMatches: [
        "sha256~FtMI7u5bok6IpC7GExZA8F_b--JB-j0Uw9mtTCBQBX",
        "sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXX",
      ],
    },
    keywords: ["sha256~"],
    pattern: /(?<![A-Za-z0-9_-])(sha256~[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/,
  },
  {
    id: "prefect-api-key",
    kind: "credential_detected",
    label: "prefect_api_key",
    examples: {
      matches: ["pnu_dWHq62VYrXXjZCLbHdIDb5nhqgpTZNb49Ub9"],
      nonMatches: ["pnu_dWHq62VYrXXjZCLbHdIDb5nhqgpTZNb49Ub"],
    },
    keywords: ["pnu_"],
    pattern: /\b(pnu_[A-Za-z0-9]{36})(?![A-Za-z0-9])/,
  },
  {
    id: "pulumi-access-token",
    kind: "credential_detected",
    label: "pulumi_access_token",
    examples: {
      matches: ["pul-8ee1efc9784029fc9285b3ac3a54649fa81f6bc9"],
      nonMatches: ["pul-8ee1efc9784029fc9285b3ac3a54649fa81f6bc"],
    },
    keywords: ["pul-"],
    pattern: /\b(pul-[a-f0-9]{40})(?![a-f0-9])/,
  },
  {
    id: "readme-api-key",
    kind: "credential_detected",
    label: "readme_api_key",
    examples: {
      matches: ["rdme_z88j75ebxur6vigzzub5fwo4hvfv6my3lmep5yhyjsrzfvduv4z77j2jp5is5h6cq614et"],
      nonMatches: ["rdme_z88j75ebxur6vigzzub5fwo4hvfv6my3lmep5yhyjsrzfvduv4z77j2jp5is5h6cq614e"],
    },
    keywords: ["rdme_"],
    pattern: /\b(rdme_[a-z0-9]{70})(?![a-z0-9])/,
  },
  {
    id: "scalingo-api-token",
    kind: "credential_detected",
    label: "scalingo_api_token",
    examples: {
      matches: ["tk-us-f21aJFFtVLT8Usgp44w9vU7FD1dzdPK3umS-Fm0I85Zwnpip"],
      nonMatches: ["tk-us-f21aJFFtVLT8Usgp44w9vU7FD1dzdPK3umS-Fm0I85Zwnpi"],
    },
    keywords: ["tk-us-"],
    pattern: /\b(tk-us-[A-Za-z0-9_-]{48})(?![A-Za-z0-9_-])/,
  },
  {
    id: "sendinblue-api-key",
    kind: "credential_detected",
    label: "brevo_api_key",
    examples: {
      matches: [
        "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",
      ],
      nonMatches: [
        "xkeysib-a44aae14b7f5b2cd8dbd2d41c7ffb8d195fcc18ebb2127386cc26d5d34f59d23-ev7CmSzaubgKody",
      ],
    },
    keywords: ["xkeysib-"],
    pattern: /\b(xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})(?![A-Za-z0-9])/,
  },
  {
    id: "settlemint-token",
    kind: "credential_detected",
    label: "settlemint_token",
    examples: {
      matches: ["sm_sat_SZgGwFYX44Xfcek6"],
      nonMatches: ["sm_sat_SZgGwFYX44Xfcek"],
    },
    keywords: ["sm_pat_", "sm_aat_", "sm_sat_"],
    pattern: /\b(sm_(?:pat|aat|sat)_[A-Za-z0-9]{16})(?![A-Za-z0-9])/,
  },
  {
    id: "shippo-api-token",
    kind: "credential_detected",
    label: "shippo_api_token",
    examples: {
      matches: ["shippo_test_5fbd09182bc02aaa442049f8c0e43ebe10682025"],
      nonMatches: ["shippo_test_5fbd09182bc02aaa442049f8c0e43ebe1068202"],
    },
    keywords: ["shippo_"],
    pattern: /\b(shippo_(?:live|test)_[a-f0-9]{40})(?![a-f0-9])/,
  },
  {
    id: "sidekiq-credentials",
    kind: "credential_detected",
    label: "sidekiq_credentials",
    examples: {
      matches: [
        "BUNDLE_ENTERPRISE__CONTRIBSYS__COM=c4e1f8a2:7b9d03e6",
        'export BUNDLE_GEMS__CONTRIBSYS__COM="c4e1f8a2:7b9d03e6"',
      ],
      nonMatches: [
        "BUNDLE_GEMS__CONTRIBSYS__COM=${SIDEKIQ_CREDENTIALS}",
        "BUNDLE_GEMS__CONTRIBSYS__COM=c4e1f8a2",
      ],
    },
    keywords: ["__contribsys__com"],
    // Bundler's setting for the Sidekiq Pro and Enterprise gem servers:
    // `username:password`, eight hex digits each
    pattern: new RegExp(
      String
        .raw`BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM${ASSIGN}(?:\\?["'])?([a-f0-9]{8}:[a-f0-9]{8})(?![a-f0-9])`,
      "i",
    ),
  },
  {
    id: "slack-legacy-bot-token",
    kind: "credential_detected",
    label: "slack_bot_token",
    examples: {
      matches: ["xoxb-58804322-vuZHzyrlromdK37ZLn"],
      nonMatches: ["xoxb-58804322-vuZHzyrlromdK37ZL"],
    },
    keywords: ["xoxb-"],
    pattern: /\b(xoxb-[0-9]{8,14}-[A-Za-z0-9]{18,34})(?![A-Za-z0-9-])/,
    // the two-part legacy form (team id, 24 characters)
  },
  {
    id: "slack-config-token",
    kind: "credential_detected",
    label: "slack_config_token",
    examples: {
      matches: [
        "xoxe-4-cguiBXBcB8PpNJeB0P5aYuNmhBez20cFVARGimb2h1nXPO5IF7PbipIkZP2nxpeaDk2J042VJ38XjoOTTC5ml5nyTsOLwoLOHdCt",
      ],
      nonMatches: [
        "xoxe-4-cguiBXBcB8PpNJeB0P5aYuNmhBez20cFVARGimb2h1nXPO5IF7PbipIkZP2nxpeaDk2J042VJ38XjoOTTC5ml5nyTsOLwoLOHdC",
      ],
    },
    keywords: ["xoxe"],
    pattern: /\b(xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{100,400})(?![A-Za-z0-9])/,
    // configuration access (xoxe.xoxp-1-…) and refresh (xoxe-1-…) tokens
  },
  {
    id: "sourcegraph-access-token",
    kind: "credential_detected",
    label: "sourcegraph_access_token",
    examples: {
      matches: ["sgp_D2Da98180C42a1EEe9E39CCb2BDb750E8C26625E"],
      nonMatches: [
        "sgp_D2Da98180C42a1EEe9E39CCb2BDb750E8C26625",
        "sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa",
      ],
    },
    keywords: ["sgp_"],
    pattern: /\b(sgp_(?:(?:local|[A-Fa-f0-9]{16})_)?[A-Fa-f0-9]{40})(?![A-Za-z0-9])/,
  },
  {
    id: "microsoft-teams-webhook",
    kind: "credential_detected",
    label: "teams_webhook_url",
    examples: {
      matches: [
        ".webhook.office.com/webhookb2/G@y0ohG5t/3zOTxZk5jetTA8LlhKwJsn86DqHS4_@bz3B@mVGx8HJpHUUiyx",
      ],
      nonMatches: [
        ".webhook.office.com/webhookb2/G@y0ohG5t/3zOTxZk5jetTA8LlhKwJsn86DqHS4_@bz3B@mVGx8HJpHUUiy",
      ],
    },
    keywords: ["webhook.office.com"],
    pattern: /\.webhook\.office\.com\/webhookb2\/([A-Za-z0-9@\/_-]{60,400})/,
  },
  {
    id: "docker-config-base64",
    kind: "credential_detected",
    label: "docker_registry_auth",
    examples: {
      matches: [
        "eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJaR1Z3Ykc5NU9scHhOMFpCUzBWM01sSjRPUT09In19fQ==",
      ],
      nonMatches: ["eyJhdXRocyI6e319"],
    },
    keywords: ["eyjhdxrocyi6"],
    pattern: /\b(eyJhdXRocyI6[A-Za-z0-9+/]{20,8192}={0,2})/,
    // base64 of a `.dockerconfigjson` (`{"auths":…`)
  },
  {
    id: "jwt-base64",
    kind: "credential_detected",
    label: "jwt",
    examples: {
      matches: [
        "ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUpHUVV0RkxYVnpaWEl0TkRJaUxDSnBZWFFpT2pFM01EQXdNREF3TURCOS5xN1dtMlJ4OUt2NExwOFNuM0R0NlloMVpjNUJqME5nM01mN0t1MlFlVHo=",
      ],
      nonMatches: [
        "ZXlKaGJHY2lPaUpJVXpJMU5pSjkgaXMgdGhlIGhlYWRlciBvZiBhIHRva2VuLCBub3RoaW5nIG1vcmU=",
      ],
    },
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
    examples: {
      matches: [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5\n-----END OPENSSH PRIVATE KEY-----",
      ],
      nonMatches: [
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6\n-----END PUBLIC KEY-----",
      ],
    },
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
    examples: {
      matches: [
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1\nZc5Bj0Ng3Mf7Ku2QeTz\nPrivate-Lines: 1\nAAAAIFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2QeTzW8rNp\n",
      ],
      nonMatches: ["Private-Lines: 1\nAAAAIFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0Ng3Mf7Ku2QeTzW8rNp\n"],
    },
    keywords: ["private"],
    pattern: /Private-Lines:\s*\d+(?:\s|\\[nr])+([A-Za-z0-9+/=](?:[A-Za-z0-9+/=]|\s|\\[nr])*)/,
    requires: /PuTTY-User-Key-File/,
    minLength: 40,
  },
  {
    id: "jwt",
    kind: "credential_detected",
    label: "jwt",
    examples: {
      matches: ["eyJ68SULPhH.eyJwIggwcQi.gDXt526f"],
      nonMatches: ["eyJ68SULPhH.eyJwIggwcQi.gDXt526"],
    },
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
    examples: {
      matches: ["DATABASE_URL=postgres://app:Pq81FAKEvz3Lm@db.internal:5432/app"],
      nonMatches: ["DATABASE_URL=postgres://postgres:postgres@localhost:5432/app"],
    },
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
    examples: {
      matches: ["git clone https://deploy:Zq7FAKEw2Rx9@git.internal/repo.git"],
      nonMatches: ["git clone https://deploy:${GIT_PASSWORD}@git.internal/repo.git"],
    },
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
    examples: {
      matches: [
        "curl -u admin:Zq7FAKEw2Rx9 https://api.internal/v1",
        'curl --user "ops@example.com:Zq7FAKEw2Rx9" https://api.internal/v1',
      ],
      nonMatches: [
        "curl -u username:token https://api.internal/v1",
        'curl --user "xxx:yyy" https://api.internal/v1',
      ],
    },
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
    examples: {
      matches: [
        "Bearer HEleWr8j",
        'curl -H "Authorization: Bearer FAKEq7Wm2Rx9Kv4Lp8Sn3D" https://api.internal',
      ],
      nonMatches: [
        "Bearer HEleWr8",
        'curl -H "Authorization: Bearer ${TOKEN}" https://api.internal',
      ],
    },
    keywords: ["bearer"],
    pattern: /\b[Bb]earer\s+([A-Za-z0-9._~+/-]{8,4096}=*)/,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "basic-auth-header",
    kind: "credential_detected",
    label: "basic_auth_header",
    examples: {
      matches: ["Authorization: Basic ZGVwbG95OlpxN0ZBS0V3MlJ4OQ=="],
      nonMatches: ["Authorization: Basic <credentials>"],
    },
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
    examples: {
      matches: [
        "Authorization: Token FAKEq7Wm2Rx9Kv4Lp8Sn3D",
        "Authorization: Api-Token FAKEq7Wm2Rx9Kv4Lp8Sn3D",
      ],
      nonMatches: ["Authorization: Token $API_TOKEN"],
    },
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
    examples: {
      matches: ["mysql -u root -pZq7FAKEw2Rx9 app"],
      nonMatches: ["mysql -u root -p app"],
    },
    keywords: ["mysql", "mariadb"],
    pattern:
      /\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]{0,200}?\s-p([^\s"'-][^\s"']{3,199})/,
    allow: [...placeholderSecrets, ...defaultPasswords],
  },
  {
    id: "docker-config-auth",
    kind: "credential_detected",
    label: "docker_registry_auth",
    examples: {
      matches: ['{"auths":{"ghcr.io":{"auth":"ZGVwbG95OlpxN0ZBS0V3MlJ4OQ=="}}}'],
      nonMatches: ['{"auths":{"ghcr.io":{"auth":""}}}'],
    },
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
    examples: {
      matches: ["docker login -u deploy -p Zq7FAKEw2Rx9 ghcr.io"],
      nonMatches: ["docker login -u deploy -p $REGISTRY_PASSWORD ghcr.io"],
    },
    keywords: ["login", "sshpass"],
    pattern:
      /\b(?:(?:docker|podman|buildah|skopeo|helm registry|oras) login|sshpass)\b[^\n|;&]{0,200}?\s-p\s*(?:\\?["'])?([^\s"'-][^\s"']{3,199})/,
    allow: [...placeholderSecrets, ...defaultPasswords],
  },
  {
    id: "cli-password-flag",
    kind: "credential_detected",
    label: "generic_password",
    examples: {
      matches: ["./setup --db-password Zq7FAKEw2Rx9Lm"],
      nonMatches: ['./setup --db-password "$DB_PASSWORD"'],
    },
    keywords: ["pass"],
    pattern: /(?<![\w-])--(?:[a-z]+-)?pass(?:word|wd)?\s+(?:\\?["'])?([^\s"'-][^\s"']{7,199})/,
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
  {
    id: "cli-token-flag",
    kind: "credential_detected",
    label: "generic_token",
    examples: {
      matches: ["gh auth login --token FAKEq7Wm2Rx9Kv4Lp8Sn3D"],
      nonMatches: ["gh auth login --token $GH_TOKEN"],
    },
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
    examples: {
      matches: [
        "API_TOKEN=Zq7FAKEw2Rx9Lm4",
        'var apiToken string = "Zq7FAKEw2Rx9Lm4"',
        'val dbPassword: String = "Zq7FAKEw2Rx9Lm4"',
        "apiToken := `Zq7FAKEw2Rx9Lm4`",
        "API_TOKEN ?= Zq7FAKEw2Rx9Lm4",
        '$password .= "Zq7FAKEw2Rx9Lm4";',
        '"client_secret" => "Zq7FAKEw2Rx9Lm4",',
        'System.setProperty("API_TOKEN", "Zq7FAKEw2Rx9Lm4")',
        "ASANA_TOKEN=4829175036284917",
        "MAPBOX_TOKEN=pk.x7k2m9q4w8e1r5t3y6u0i2o4p7a9s1d3f5g8h0j2k4l6z8x1c3v5b7n9m2q4w6e8.r1t3y5u7i9o2p4a6s8d0fg",
        "hubspotKey: Zq7FAKEw2Rx9Lm4",
      ],
      nonMatches: [
        "GITHUB_API_KEY=\nDYNATRACE_API_KEY=",
        "API_TOKEN = \nZq7FAKEw2Rx9Lm4",
        "password_file = /run/secrets/Zq7FAKEw2Rx9Lm4",
        "max_tokens = 4096",
        "io.jsonwebtoken:jjwt-api:0.12.5",
        "token = decodeURIComponent(params.get(hash))",
        "api_key = abcdefghijklmnopqrstuvwxyz123",
        "password = ops_eyJzaWduSW5BZGRyZXNzIjoi...",
        "TOKEN_TTL_MS = 864000000",
        "token = config.services.authentication.token2",
        "API_TOKEN=FAKE…[Redacted]",
      ],
    },
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
    examples: {
      matches: [
        "apiVersion: v1\nkind: Secret\ndata:\n  tls.key: AAAAAAAAAAB3c2gtZWQyNTUxOQFAKEq7Wm2Rx9Kv4Lp8Sn3Dt6Yh1Zc5Bj0=\n",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  db-url: cG9zdGdyZXM6Ly9acTdGQUtFdzJSeDk=\n",
      ],
      nonMatches: [
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\ndata:\n  db-url: cG9zdGdyZXM6Ly9acTdGQUtFdzJSeDk=\n",
      ],
    },
    keywords: ["secret"],
    // A value under a Kubernetes Secret's `data:` is base64 of the secret,
    // one line or a YAML block scalar; line-numbered as a Read shows it.
    pattern:
      /^[ \t]*(?:\d+\t)?[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]*(?:\d+\t)?[ \t]+)?\\?["']?([A-Za-z0-9+/]{12,4096}={0,2})\\?["']?[ \t]*$/m,
    // not a manifest's own fields (`kind: ReplicationController` after `---`)
    allow: codeValues,
    requires: /kind:[ \t]*\\?["']?secret\b/i,
    minEntropy: 3,
  },
  {
    id: "generic-xml-element",
    kind: "credential_detected",
    label: "generic_secret",
    examples: {
      matches: [
        "<apiToken>Zq7FAKEw2Rx9Lm4</apiToken>",
        "<apiToken>\n    Zq7FAKEw2Rx9Lm4\n</apiToken>",
      ],
      nonMatches: ["<apiToken>${API_TOKEN}</apiToken>", "<tokenType>BearerTokenKind</tokenType>"],
    },
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
    examples: {
      matches: [
        '<add key="ClearTextPassword" value="Zq7FAKEw2Rx9" />',
        "- name: API_TOKEN\n  value: Zq7FAKEw2Rx9Lm4",
      ],
      nonMatches: [
        '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
        "- name: API_TOKEN_TTL\n  value: 86400000000",
      ],
    },
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
    examples: {
      matches: ['{"api_token": "Zq7FAKEw2Rx9Lm4"}', '{"hubspotKey": "Zq7FAKEw2Rx9Lm4"}'],
      nonMatches: [
        '{"page_token": "Zq7FAKEw2Rx9Lm4"}',
        '{"password_file": "Zq7FAKEw2Rx9Lm4"}',
        '{"csrf-token": "Zq7FAKEw2Rx9Lm4"}',
      ],
    },
    keywords: SECRET_NAME_KEYWORDS,
    key: /pass|pwd|token|secret|key|cred|auth/i,
    pattern: /^\s*(\S{8,200})\s*$/,
    keyName: "any",
    minEntropy: 3,
    allow: [...placeholderSecrets, ...codeValues],
  },
];

/**
 * Values that stand for a secret without being one: variables, templates,
 * masks and documentation placeholders. Credential rules that find a secret by
 * its context (a keyword, a URL's user info, a header) use these as safe
 * exceptions, tested against the would-be secret.
 *
 * @module
 */

/** Variables, templates, masks and "your-key-here" style placeholders. */
export const placeholderSecrets: RegExp[] = [
  // $PASS, ${DB_PASS}, $(cat file), %(password)s, {{ secret }}, <password>, [PASSWORD], %NUGET_PASSWORD%
  /^\$|\$\{|\{\{|\}\}|%\(|<[^>]*>|^<|>$|^%s$|^\[[^\]]*\]$|^%[A-Za-z_][\w.-]*%$/,
  // ***, xxxx, ..., ####, ????
  /^[*xX.#?_-]+$/,
  /(?:your|my|the)[_-]?(?:api|secret|password|pass|token|key|access|auth|client|db|app)/i,
  /example|placeholder|redacted|changeme|change[_-]me|dummy|insert[_-]?here|replace[_-]?(?:me|with|this)|goes[_-]?here/i,
];

/**
 * Values no credential of any vendor looks like: alphabet and keyboard runs
 * (`abcdefghijklmnopqrstuvwxyz123`, `1234567890`), one character repeated,
 * text cut short (`ops_eyJzaWdu...`, `…`), a marker left by redaction and
 * "put your token here" inside a token's shape. Applied to every rule: a
 * random token holds a run of six in a row about once in a billion draws.
 */
export const fillerSecrets: RegExp[] = [
  /abcdef|bcdefg|cdefgh|defghi|efghij|fghijk|ghijkl|hijklm|ijklmn|jklmno|klmnop|lmnopq|mnopqr|nopqrs|opqrst|pqrstu|qrstuv|rstuvw|stuvwx|tuvwxy|uvwxyz|012345|123456|234567|345678|456789|qwerty|asdfgh|zxcvbn/i,
  /^(.)\1+$/,
  /\.{2,}$|…|\[redacted/i,
  /put[_-]?your|your[_-]?(?:token|key|secret|password)[_-]?here/i,
];

/**
 * Low variety in a short secret: one letter, or the `#` or `*` of a mask,
 * eight times in a row (`sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa`,
 * `xoxp-…-####################`). Digits may repeat, as in
 * the numeric ids inside Slack tokens, and so may `A`, which base64 writes
 * for zero bytes (`AAAAAAAAAAC7hjsA…` in a Kubernetes Secret). Only for
 * secrets of at most {@link MAX_RUN_CHECKED} characters: longer base64 (keys,
 * certificates) holds such runs of other letters too.
 */
export const repeatedRun = /([B-Za-z#*])\1{7}/;
/** Longest secret {@link repeatedRun} is tested on. */
export const MAX_RUN_CHECKED = 100;

/** Well-known default or throwaway passwords of local services and tutorials. */
export const defaultPasswords: RegExp[] = [
  /^(?:password|passwd|pass|pwd|secret|postgres|postgresql|root|admin|guest|test|dev|user|mysql|redis|rabbitmq|mongo|sa|pass123|password123|secret123|token|apikey|api_key|key)$/i,
];

/**
 * Values of `key = value` assignments that are code or configuration rather
 * than secrets: identifiers, member access, numbers, paths and URLs.
 */
export const codeValues: RegExp[] = [
  // words and identifiers without digits: `string`, `secret_key_base`,
  // `passwordConfirmation`, `PasswordHash` (a random run of letters is none of these)
  /^[A-Za-z]{1,15}$|^[A-Za-z]+(?:[_.-][A-Za-z]*)+$|^[a-z]+(?:[A-Z][a-z]+)+$|^(?:[A-Z][a-z]+)+$/,
  // member access: os.environ, process.env.API_KEY, config.auth.token2 (but not a
  // HashiCorp Vault token, `s.` or `hvs.` and random characters, nor parts
  // longer than names are: `pk.<60 random characters>.<22>`)
  /^(?!(?:hv[sbr]|[sbr])\.[A-Za-z0-9_-]{24,}$)[A-Za-z_$][\w$]{0,39}(?:\.[A-Za-z_$][\w$]{0,39})+$/,
  // numbers, but not the 16 digits and more of a client id or secret (Asana, Discord)
  /^\d{1,15}$/,
  // type and class names, constants: OAuth2Client, URLPatternComponentResult, K8S_VOLUME_TYPE
  /^(?:[A-Z]*[A-Z][a-z]{2,}\d{0,2})+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/,
  // paths and URLs
  /^(?:[a-z][a-z0-9+.-]*:\/\/|\.{0,2}\/|~\/)/i,
  /^(?:true|false|null|none|nil|undefined)$/i,
  // text in another script (a localized message under a `pass` key): secrets are ASCII
  /[\u0080-\uFFFF]/,
];

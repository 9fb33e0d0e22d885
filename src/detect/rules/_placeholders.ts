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
  // $PASS, ${DB_PASS}, $(cat file), %(password)s, {{ secret }}, <password>
  /^\$|\$\{|\{\{|\}\}|%\(|<[^>]*>|^<|>$|^%s$/,
  // ***, xxxx, ..., ####, ????
  /^[*xX.#?_-]+$/,
  /(?:your|my|the)[_-]?(?:api|secret|password|pass|token|key|access|auth|client|db|app)/i,
  /example|placeholder|redacted|changeme|change[_-]me|dummy|insert[_-]?here|replace[_-]?(?:me|with|this)|goes[_-]?here/i,
];

/** Well-known default or throwaway passwords of local services and tutorials. */
export const defaultPasswords: RegExp[] = [
  /^(?:password|passwd|pass|pwd|secret|postgres|postgresql|root|admin|guest|test|dev|user|mysql|redis|rabbitmq|mongo|sa|pass123|password123|secret123)$/i,
];

/**
 * Values of `key = value` assignments that are code or configuration rather
 * than secrets: identifiers, member access, numbers, paths and URLs.
 */
export const codeValues: RegExp[] = [
  // words and identifiers without digits: `string`, `secret_key_base`,
  // `passwordConfirmation`, `PasswordHash` (a random run of letters is none of these)
  /^[A-Za-z]{1,15}$|^[A-Za-z]+(?:[_.-][A-Za-z]*)+$|^[a-z]+(?:[A-Z][a-z]+)+$|^(?:[A-Z][a-z]+)+$/,
  // member access: os.environ, process.env.API_KEY, config.auth.token2
  /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/,
  /^\d+$/,
  // paths and URLs
  /^(?:[a-z][a-z0-9+.-]*:\/\/|\.{0,2}\/|~\/)/i,
  /^(?:true|false|null|none|nil|undefined)$/i,
];

/**
 * Shapes shared by the detection engine and its rule data in `rules/`.
 *
 * @module
 */

/** The risk flag kinds of the query API (docs/api.md §2.7). */
export const FLAG_KINDS = [
  "credential_detected",
  "destructive_operation",
  "sensitive_path",
] as const;

/** One of {@link FLAG_KINDS}. */
export type FlagKind = typeof FLAG_KINDS[number];

/** Fields every rule has. */
interface RuleBase {
  /** Stable identifier, kebab-case, unique within its file. */
  id: string;
  /**
   * Lower-case strings for a cheap prefilter: the pattern runs only on texts
   * that contain one of them (for shell rules: on commands named one of them).
   */
  keywords: string[];
  /** Safe exceptions: a match that any of these matches is not reported. */
  allow?: RegExp[];
  /** Evidence label: the credential kind, or the kind of command. */
  label: string;
}

/** A credential format. */
export interface CredentialRule extends RuleBase {
  kind: "credential_detected";
  /**
   * Matches the credential in a text. Capture group 1 (or the first group that
   * took part in the match), else the whole match, is the secret: what evidence
   * abbreviates and redaction replaces. `allow` is tested against the secret.
   */
  pattern: RegExp;
  /**
   * When set, the rule looks only at JSON string values whose property name
   * matches, and `pattern` is tested against the whole value.
   */
  key?: RegExp;
  /** Something that must also occur in the same document (arguments or result). */
  requires?: RegExp;
  /** Least Shannon entropy of the secret, in bits per character. */
  minEntropy?: number;
  /** Least length of the secret. */
  minLength?: number;
  /**
   * The rule finds a secret by the name it is assigned to: the match is kept
   * only when that name (the pattern's named group `key`, grown backwards to
   * the whole identifier, or the JSON property for `key` rules) announces
   * this kind of secret by its head noun (`rules/_key_names.ts`); with `any`,
   * any kind, which then names the evidence (`generic_password`, …). The group
   * `key` must be the pattern's first group.
   */
  keyName?: "password" | "token" | "api_key" | "client_secret" | "secret" | "any";
  /**
   * Lower-case vendor names (`telegram`): a key naming the vendor makes a bare
   * `key` a credential. With `strictFormat`, every credential of the vendor
   * has this rule's format, so a value under such a key that lacks it is
   * not taken by a `keyName` rule either.
   */
  names?: string[];
  /** Every credential of the vendor has this rule's format (see `names`). */
  strictFormat?: boolean;
  /** A check of the secret beyond its pattern, by name (see `_verify.ts`). */
  verify?: "base64-jwt";
  /**
   * The rule's own examples, kept beside it so a change to its pattern or
   * checks shows at once: `matches` are texts in which this rule names a
   * secret (the evidence carries its label), `nonMatches` near misses that
   * must raise no credential flag at all. Rules with `key` take JSON
   * documents. Run by `tests/detect_rules_test.ts`.
   */
  examples: RuleExamples;
}

/** Texts a rule must find a secret in, and near misses it must leave alone. */
export interface RuleExamples {
  matches: string[];
  nonMatches: string[];
}

/** A destructive command or statement. */
export interface DestructiveRule extends RuleBase {
  kind: "destructive_operation";
  /**
   * `shell`: `pattern` is tested against one simple command whose wrappers
   * (`sudo`, `env`, `sh -c`, …) are removed, its words unquoted and joined by
   * single spaces, its program name reduced to a base name (`/bin/rm` → `rm`);
   * `keywords` are program names. `sql`: `pattern` is tested against one SQL
   * statement; `keywords` are lower-case substrings of it.
   */
  scope: "shell" | "sql";
  pattern: RegExp;
}

/** A sensitive file or directory. */
export interface SensitivePathRule extends RuleBase {
  kind: "sensitive_path";
  /**
   * Tested against the path lower-cased, with `\` turned into `/` and `$HOME`
   * into `~`. `allow` is tested against the same form.
   */
  pattern: RegExp;
}

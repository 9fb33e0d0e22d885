/**
 * Shapes shared by the detection engine and its rule data in `rules/`.
 *
 * @module
 */

/** The risk flag kinds of the query API (spec §2.7). */
export type FlagKind = "credential_detected" | "destructive_operation" | "sensitive_path";

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

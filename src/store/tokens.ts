/**
 * Random identifiers and secrets, and the hash under which secrets are stored.
 *
 * @module
 */
import { createHash } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `bytes` random bytes written in base62 (unbiased: rejection sampling). */
export function randomBase62(bytes: number): string {
  // log2(62) ≈ 5.954 bits per character.
  const length = Math.ceil((bytes * 8) / Math.log2(62));
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new random id with a readable prefix, e.g. `org_…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(12)}`;
}

/** Hex SHA-256 of a secret: the only form in which keys are stored. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/**
 * Checks of a would-be secret that a pattern cannot express, named by a
 * rule's `verify`.
 *
 * @module
 */

/** Base64 (standard or URL-safe, padded or not) decoded as Latin-1 text; undefined when it is not. */
function base64Text(text: string): string | undefined {
  const standard = text.replaceAll("-", "+").replaceAll("_", "/").replace(/[\r\n]/g, "");
  try {
    return atob(standard + "=".repeat((4 - (standard.length % 4)) % 4));
  } catch {
    return undefined;
  }
}

/** True when the text is base64 of a JSON Web Token (`eyJ….eyJ…`). */
function base64Jwt(text: string): boolean {
  const decoded = base64Text(text);
  return decoded !== undefined && /^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}/.test(decoded);
}

/** The checks by name. */
export const verifiers: Record<"base64-jwt", (secret: string) => boolean> = {
  "base64-jwt": base64Jwt,
};

/**
 * Opaque keyset cursors bound to who asked and what for: the last row's sort
 * key in base64url JSON, then an HMAC-SHA256 under the installation's cursor
 * secret over that key, the organization, the endpoint and the filters (not
 * the page size, which a client may change between pages). A cursor of
 * another organization, of other filters, of another installation, or with
 * any byte changed fails the check and is refused like one that does not
 * decode: a cursor can only be replayed by the organization it was served to.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidRequest } from "../http/responses.ts";

/** A sort key: e.g. `[last_seen_ms, session_id]` or `[ts_ms, id]`. */
export type CursorKey = [number, string];

/** Encodes and checks the cursors of one list request. */
export interface CursorBinding {
  /** The cursor that resumes after `key` for the same organization and filters. */
  encode(key: CursorKey): string;
  /** The sort key a cursor resumes after; 400 `invalid_request` unless it was issued here. */
  decode(cursor: string): CursorKey;
}

const REFUSED = "invalid cursor: it does not belong to this request; " +
  "send next_cursor unchanged, with the same filters";

/**
 * The cursor binding of a list request of `orgId` on `endpoint` under
 * `filters`, keyed with the installation's `secret` (shared by every node).
 */
export function cursorBinding(
  secret: Uint8Array,
  orgId: string,
  endpoint: string,
  filters: object,
): CursorBinding {
  const scope = JSON.stringify([orgId, endpoint, Object.entries(filters).sort()]);
  const mac = (payload: string) =>
    createHmac("sha256", secret).update(scope).update("\n").update(payload).digest();
  return {
    encode(key) {
      const payload = Buffer.from(JSON.stringify(key)).toString("base64url");
      return `${payload}.${mac(payload).toString("base64url")}`;
    },
    decode(cursor) {
      const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(cursor);
      if (!match) throw invalidRequest(REFUSED);
      const [, payload, tag] = match as unknown as [string, string, string];
      // Compared as text, so that no other spelling of the same bytes passes.
      const expected = Buffer.from(mac(payload).toString("base64url"));
      const given = Buffer.from(tag);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw invalidRequest(REFUSED);
      }
      const key: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      if (
        !Array.isArray(key) || key.length !== 2 || !Number.isSafeInteger(key[0]) ||
        typeof key[1] !== "string"
      ) {
        throw invalidRequest(REFUSED);
      }
      return [key[0], key[1]];
    },
  };
}

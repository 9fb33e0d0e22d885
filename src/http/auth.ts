/**
 * Bearer authentication of the query API (spec §5) and the ingest listener.
 *
 * @module
 */
import type { ApiPrincipal, Awaitable, IngestPrincipal, KeyVerifier } from "../store/stores.ts";
import { ApiError } from "./responses.ts";

const BEARER = /^Bearer ([\x21-\x7e]+)$/;
const UNAUTHENTICATED = "invalid or missing Bearer credential";

/** The key in an `Authorization` header of exactly `Bearer <key>`, else null. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

async function verify<P>(check: () => Awaitable<P | null>): Promise<P> {
  let principal: P | null;
  try {
    principal = await check();
  } catch {
    throw new ApiError(503, "keystore_unavailable", "the key store is unavailable; retry later");
  }
  if (principal === null) throw new ApiError(401, "unauthenticated", UNAUTHENTICATED);
  return principal;
}

/** The organization an API request speaks for; 401 or 503 otherwise. */
export function authenticateApiRequest(
  request: Request,
  keys: KeyVerifier,
): Promise<ApiPrincipal> {
  const token = bearerToken(request.headers.get("authorization"));
  return verify(() => token === null ? null : keys.verifyApiKey(token));
}

/** The organization and actor an ingest request speaks for; 401 or 503 otherwise. */
export function authenticateIngestRequest(
  request: Request,
  keys: KeyVerifier,
): Promise<IngestPrincipal> {
  const token = bearerToken(request.headers.get("authorization"));
  return verify(() => token === null ? null : keys.verifyIngestKey(token));
}

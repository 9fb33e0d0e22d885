/**
 * Bearer authentication of the query API (docs/api.md §5) and the ingest listener.
 * It knows keys only as a check that names a principal, so the toolkit needs
 * no store.
 *
 * @module
 */
import { ApiError } from "./responses.ts";

const BEARER = /^Bearer ([\x21-\x7e]+)$/;
const UNAUTHENTICATED = "invalid or missing Bearer credential";

/** The key in an `Authorization` header of exactly `Bearer <key>`, else null. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** What a key store answers for an API key: the principal it stands for, or null. */
export interface ApiKeyCheck<P> {
  verifyApiKey(token: string): P | null | Promise<P | null>;
}

/** The organization an API request speaks for; 401, or 503 when the key store fails. */
export async function authenticateApiRequest<P>(
  request: Request,
  keys: ApiKeyCheck<P>,
): Promise<P> {
  const token = bearerToken(request.headers.get("authorization"));
  let principal: P | null;
  try {
    principal = token === null ? null : await keys.verifyApiKey(token);
  } catch {
    throw new ApiError("keystore_unavailable", "the key store is unavailable; retry later");
  }
  if (principal === null) throw new ApiError("unauthenticated", UNAUTHENTICATED);
  return principal;
}

/**
 * Which PostgreSQL failures are answered 503 (they pass) rather than 500: a
 * write on a connection the server had just ended fails in the socket with
 * EPIPE ("This socket has been ended by the other party"), seen when a
 * database made read-only had its backends terminated (faults_disk_test).
 */
import assert from "node:assert/strict";
import { pgUnavailable } from "../src/store/postgres/client.ts";

function failure(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

Deno.test("connection failures, including a write after the server ended the socket, pass", () => {
  for (const code of ["ECONNREFUSED", "ECONNRESET", "EPIPE", "CONNECTION_ENDED", "57P01"]) {
    assert.equal(pgUnavailable(failure(code))?.reason, "unreachable", code);
  }
  assert.equal(pgUnavailable(failure("25006"))?.reason, "readOnly");
  assert.equal(pgUnavailable(failure("40P01"))?.reason, "busy");
});

Deno.test("other failures are not called unavailable", () => {
  for (const code of ["23505", "42P01", "EACCES", ""]) {
    assert.equal(pgUnavailable(failure(code)), null, code);
  }
});

/**
 * Throwaway TLS material for tests: a CA and a leaf certificate for
 * 127.0.0.1 and localhost signed by it (rustls, behind both `fetch` and `node:tls` in Deno,
 * refuses a self-signed CA certificate used as the server's own).
 *
 * @module
 */

async function openssl(args: string[], cwd: string): Promise<void> {
  const result = await new Deno.Command("openssl", { args, cwd, stdout: "null", stderr: "piped" })
    .output();
  if (!result.success) throw new Error(new TextDecoder().decode(result.stderr));
}

/** Writes `ca.pem`, `leaf.pem` and `leaf.key` into `dir`; returns the CA text and the leaf paths. */
export async function makeCertificates(
  dir: string,
): Promise<{ ca: string; cert: string; key: string }> {
  const days = ["-days", "2"];
  await openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem"]
      .concat(days, ["-subj", "/CN=test-ca"]),
    dir,
  );
  await openssl(
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr"]
      .concat(["-subj", "/CN=127.0.0.1"]),
    dir,
  );
  await Deno.writeTextFile(`${dir}/ext.cnf`, "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await openssl(
    ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"]
      .concat(["-out", "leaf.pem"], days, ["-extfile", "ext.cnf"]),
    dir,
  );
  return {
    ca: await Deno.readTextFile(`${dir}/ca.pem`),
    cert: `${dir}/leaf.pem`,
    key: `${dir}/leaf.key`,
  };
}

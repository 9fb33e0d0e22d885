/**
 * Pinned agent CLIs from npm, installed once into `.agents/<package>@<version>`
 * (outside the network namespace: the registry is the one thing reached).
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

/** Where the harness keeps installed clients (ignored by git). */
export const AGENTS_CACHE = fromFileUrl(new URL("../../.agents/", import.meta.url));

/** The directory a pinned package is installed in. */
export function installDir(npmPackage: string, version: string): string {
  return join(AGENTS_CACHE, `${npmPackage.replace("/", "+")}@${version}`);
}

/** The path of an installed package's executable (`node_modules/.bin/<bin>`). */
export function binPath(npmPackage: string, version: string, bin: string): string {
  return join(installDir(npmPackage, version), "node_modules", ".bin", bin);
}

/** Installs `npmPackage@version` unless already there; returns the install directory. */
export async function installAgent(npmPackage: string, version: string): Promise<string> {
  const dir = installDir(npmPackage, version);
  const marker = join(dir, ".installed");
  try {
    await Deno.stat(marker);
    return dir;
  } catch {
    // Not installed yet.
  }
  await Deno.mkdir(dir, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--prefix",
      dir,
      `${npmPackage}@${version}`,
    ],
    stdin: "null",
  }).output();
  if (!out.success) {
    throw new Error(
      `npm install ${npmPackage}@${version} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  await Deno.writeTextFile(marker, new Date().toISOString());
  return dir;
}

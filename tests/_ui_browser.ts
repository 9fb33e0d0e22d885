/**
 * Headless Chromium for the dashboard's browser tests: Debian's `chromium`, driven by
 * puppeteer-core, with a fresh profile, nothing in the background, and a record of every
 * request the page makes so a test can fail on any host other than 127.0.0.1.
 *
 * @module
 */
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/** Where Debian installs Chromium (`apt-get install chromium`). */
export const CHROMIUM = "/usr/bin/chromium";

/** Flags that keep Chromium from reaching anything by itself. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** A browser with its own profile directory; close it with `await using`. */
export interface TestBrowser extends AsyncDisposable {
  browser: Browser;
  /** Every URL any page of this browser requested. */
  requests: string[];
  /** A new page of the given size (light or dark scheme), its requests recorded. */
  newPage(options?: { width?: number; height?: number; dark?: boolean }): Promise<Page>;
}

/** Launches Chromium with {@link CHROMIUM_FLAGS} and a fresh `--user-data-dir`. */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await Deno.makeTempDir({ prefix: "agent-telemetry-chromium-" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`],
    // puppeteer adds its own defaults; ours above are the whole list.
    ignoreDefaultArgs: true,
    pipe: true,
  });
  const requests: string[] = [];
  return {
    browser,
    requests,
    async newPage({ width = 1360, height = 900, dark = false } = {}) {
      const page = await browser.newPage();
      await page.setViewport({ width, height });
      await page.emulateMediaFeatures([
        { name: "prefers-color-scheme", value: dark ? "dark" : "light" },
      ]);
      page.on("request", (request) => {
        requests.push(request.url());
      });
      return page;
    },
    async [Symbol.asyncDispose]() {
      await browser.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

/** The requests whose host is not 127.0.0.1 (data: and about: URLs are not requests). */
export function offLoopback(requests: string[]): string[] {
  return requests.filter((url) => {
    if (url.startsWith("data:") || url.startsWith("about:")) return false;
    try {
      return new URL(url).hostname !== "127.0.0.1";
    } catch {
      return true;
    }
  });
}

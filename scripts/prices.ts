/**
 * `deno task prices`: rewrites `src/model/prices.json`, the price table the
 * server estimates model calls' costs with (docs/design.md §9), from the
 * prices the npm package `@pydantic/genai-prices` carries (the version
 * locked in deno.json: bump it there to take newer prices). Only this script
 * reads the package; the server reads the committed file and nothing else.
 * Which models the table covers is {@link COVERED}; each entry is dated with
 * the day of the run and names its vendor's price page.
 *
 * @module
 */
// deno-lint-ignore-file no-console
import { findProvider, type ModelInfo, type ModelPrice } from "@pydantic/genai-prices";
import { parseArgs } from "node:util";
import type { PriceEntry, PriceTable } from "../src/model/prices.ts";
import { handleHelp, parseOrExit } from "./_script_args.ts";

const USAGE =
  "deno task prices [--date YYYY-MM-DD]: rewrites src/model/prices.json from the npm package @pydantic/genai-prices";

/** Where the table is committed. */
const PRICES_FILE = new URL("../src/model/prices.json", import.meta.url).pathname;

/** The package and version the prices come from (deno.json's import). */
const PACKAGE = "@pydantic/genai-prices@0.1.8";

/**
 * The models the table covers, per provider: those the three agents use
 * (Claude Code: Claude; Codex CLI: GPT-5 and its Codex variants; Gemini CLI:
 * Gemini 2.5 and 3) in their current families, text models only.
 */
const COVERED: Record<string, RegExp> = {
  anthropic: /^claude-(opus|sonnet|haiku)-\d+(-\d+)?$/,
  openai:
    /^(gpt-5(\.\d+)?(-mini|-nano|-pro|-codex|-codex-mini)?|gpt-4\.1(-mini|-nano)?|gpt-4o(-mini)?|o3|o3-pro|o4-mini|codex-mini)$/,
  google: /^gemini-(2\.5|3(\.\d+)?)-(pro|flash|flash-lite)(-preview)?$/,
};

/** A price at its base tier (a long-context tier is not used: docs/design.md §9). */
function base(price: ModelPrice[string]): number | null {
  if (price === undefined) return null;
  return typeof price === "number" ? price : price.base;
}

/** The prices in force on `day`: the latest dated set that has started, else the undated one. */
function pricesOn(model: ModelInfo, day: string): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  let chosen: ModelPrice | null = null;
  for (const conditional of model.prices) {
    const constraint = conditional.constraint;
    if (constraint === undefined) chosen ??= conditional.prices;
    else if ("start_date" in constraint && constraint.start_date <= day) {
      chosen = conditional.prices;
    }
  }
  return chosen ?? model.prices[0]!.prices;
}

/** A whole model name, not a stem the package matches by prefix (`gpt-5-nano-`, `claude-sonnet-4-2025`). */
const WHOLE_NAME = /^[a-z0-9][a-z0-9.:-]*[a-z0-9]$/;
const STEM = /-\d{4}$/;

/** The plain names of a package match rule (`equals`, `starts_with`): our aliases. */
function namesOf(match: unknown): string[] {
  if (typeof match !== "object" || match === null) return [];
  const rule = match as Record<string, unknown>;
  if (typeof rule.equals === "string") return [rule.equals];
  if (typeof rule.starts_with === "string") return [rule.starts_with];
  const nested = rule.or ?? rule.and;
  return Array.isArray(nested) ? nested.flatMap(namesOf) : [];
}

/** The table of the covered models at the package's prices on `day`. */
export function priceTable(day: string): PriceTable {
  const models: PriceEntry[] = [];
  for (const [providerId, covered] of Object.entries(COVERED)) {
    const provider = findProvider({ providerId });
    if (provider === undefined) throw new Error(`Provider not in ${PACKAGE}: "${providerId}"`);
    for (const model of provider.models) {
      if (!covered.test(model.id) || model.deprecated) continue;
      const prices = pricesOn(model, day);
      const input = base(prices.input_mtok);
      const output = base(prices.output_mtok);
      if (input === null || output === null) continue;
      const aliases = [...new Set(namesOf(model.match).map((name) => name.toLowerCase()))]
        .filter((name) => name !== model.id && WHOLE_NAME.test(name) && !STEM.test(name)).sort();
      models.push({
        provider: providerId,
        model: model.id,
        aliases,
        "usd_per_million_tokens": {
          input,
          output,
          "cache_read": base(prices.cache_read_mtok) ?? input,
          "cache_write": base(prices.cache_write_mtok),
        },
        "as_of": day,
        source: provider.pricing_urls?.[0] ?? "",
      });
    }
  }
  models.sort((a, b) => a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
  return {
    about: `US dollars per million tokens by kind, read from the npm package ${PACKAGE} ` +
      "by `deno task prices` (scripts/prices.ts); matching: docs/api.md §2.13",
    models,
  };
}

if (import.meta.main) {
  handleHelp(USAGE);
  const { values } = parseOrExit(
    USAGE,
    () => parseArgs({ args: Deno.args, options: { date: { type: "string" } } }),
  );
  const day = values.date ?? new Date().toISOString().slice(0, 10);
  const table = priceTable(day);
  await Deno.writeTextFile(PRICES_FILE, JSON.stringify(table, null, 2) + "\n");
  console.log(`${PRICES_FILE}: ${table.models.length} models, prices of ${day} from ${PACKAGE}`);
}

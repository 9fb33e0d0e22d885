/**
 * The price table (`prices.json` beside this file, refreshed by
 * `deno task prices`) and the estimate of a model call's cost from its tokens
 * (docs/design.md §9): used only for calls that report no cost of their own.
 *
 * A call's model is looked up by its name, in this order (docs/api.md §2.13):
 * 1. the name exactly as sent, lower-cased, against every entry's `model` and
 *    `aliases`;
 * 2. the name without a trailing date (`-20250929`, `-2025-09-29`,
 *    `@20250929`), the same way.
 * Nothing else: no prefix of a name and no family matches, so a model the
 * table does not name gets no estimate (`null`), never a guess.
 *
 * @module
 */
import table from "./prices.json" with { type: "json" };

/** US dollars per million tokens of each kind. */
export interface TokenPrices {
  input: number;
  output: number;
  "cache_read": number;
  /** Null: the vendor sells no cache writes; written tokens are priced as input. */
  "cache_write": number | null;
}

/** One model's prices: whose, since when it was read, from where. */
export interface PriceEntry {
  provider: string;
  model: string;
  /** Other names the vendor (or a gateway) gives the same model. */
  aliases: string[];
  "usd_per_million_tokens": TokenPrices;
  /** The day the prices were read (YYYY-MM-DD). */
  "as_of": string;
  /** The vendor's price page. */
  source: string;
}

/** The table as committed. */
export interface PriceTable {
  about: string;
  models: PriceEntry[];
}

/** The tokens of one model call, by kind (input without cache reads, as stored). */
export interface CallTokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/** The committed price table. */
export const PRICE_TABLE: PriceTable = table as PriceTable;

/** A trailing date: `-20250929`, `-2025-09-29` or `@20250929`. */
const DATED_SUFFIX = /(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$/;

/** Each name and alias of a table, lower-cased, to its entry. */
export function priceIndex(entries: readonly PriceEntry[]): Map<string, PriceEntry> {
  const index = new Map<string, PriceEntry>();
  for (const entry of entries) {
    for (const name of [entry.model, ...entry.aliases]) {
      const key = name.toLowerCase();
      if (!index.has(key)) index.set(key, entry);
    }
  }
  return index;
}

const INDEX = priceIndex(PRICE_TABLE.models);

/** The entry that prices `model` by the rule of this module, or null when none does. */
export function findPrice(
  model: string,
  index: ReadonlyMap<string, PriceEntry> = INDEX,
): PriceEntry | null {
  const name = model.trim().toLowerCase();
  if (name === "") return null;
  return index.get(name) ?? index.get(name.replace(DATED_SUFFIX, "")) ?? null;
}

/** What `tokens` cost at `prices`, in US dollars. */
export function priceTokens(prices: TokenPrices, tokens: CallTokens): number {
  const cacheWrite = prices.cache_write ?? prices.input;
  return (tokens.inputTokens * prices.input +
    tokens.outputTokens * prices.output +
    tokens.cacheReadTokens * prices.cache_read +
    tokens.cacheCreationTokens * cacheWrite) / 1_000_000;
}

/** The estimated cost of a call of `model`, or null when the table does not price the model. */
export function estimateCostUsd(model: string, tokens: CallTokens): number | null {
  const entry = findPrice(model);
  return entry === null ? null : priceTokens(entry.usd_per_million_tokens, tokens);
}

import assert from "node:assert/strict";
import {
  findPrice,
  PRICE_TABLE,
  type PriceEntry,
  priceIndex,
  priceTokens,
} from "../src/model/prices.ts";

const ENTRY: PriceEntry = {
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  aliases: ["claude-sonnet-4.5"],
  "usd_per_million_tokens": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  "as_of": "2026-01-01",
  source: "https://www.anthropic.com/pricing#api",
};
const INDEX = priceIndex([ENTRY]);

Deno.test("a model is found by its exact name, an alias or without a trailing date", () => {
  for (
    const name of [
      "claude-sonnet-4-5",
      "Claude-Sonnet-4-5",
      "claude-sonnet-4.5",
      "claude-sonnet-4-5-20250929",
      "claude-sonnet-4-5@20250929",
      "claude-sonnet-4-5-2025-09-29",
    ]
  ) assert.equal(findPrice(name, INDEX), ENTRY, name);
});

Deno.test("a model the table does not name gets no price, never a near one", () => {
  for (
    const name of ["", "claude-sonnet-4", "claude-sonnet-4-5-thinking", "sonnet", "model-3"]
  ) assert.equal(findPrice(name, INDEX), null, name);
});

Deno.test("cache reads and cache writes are priced apart from input", () => {
  const prices = ENTRY.usd_per_million_tokens;
  const one = (kind: string) => ({
    inputTokens: kind === "input" ? 1e6 : 0,
    outputTokens: kind === "output" ? 1e6 : 0,
    cacheReadTokens: kind === "read" ? 1e6 : 0,
    cacheCreationTokens: kind === "write" ? 1e6 : 0,
  });
  assert.deepEqual(
    ["input", "output", "read", "write"].map((kind) => priceTokens(prices, one(kind))),
    [3, 15, 0.3, 3.75],
  );
  // A vendor without cache writes: written tokens cost what input costs.
  assert.equal(priceTokens({ ...prices, cache_write: null }, one("write")), 3);
});

Deno.test("the committed table prices the models of the recorded runs, each dated with a source", () => {
  for (const model of ["claude-sonnet-4-5-20250929", "gpt-5.5", "gemini-2.5-pro"]) {
    assert.ok(findPrice(model), model);
  }
  for (const entry of PRICE_TABLE.models) {
    assert.match(entry.as_of, /^\d{4}-\d{2}-\d{2}$/, entry.model);
    assert.match(entry.source, /^https:\/\//, entry.model);
    const prices = entry.usd_per_million_tokens;
    assert.ok(prices.input > 0 && prices.output > 0 && prices.cache_read >= 0, entry.model);
  }
});

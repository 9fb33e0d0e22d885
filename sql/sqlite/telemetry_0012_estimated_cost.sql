-- Schema 12 (issue #33): a model call's cost estimated from the price table
-- (src/ingest/prices.json) when it reported none; null when it reported one
-- or its model is not priced (docs/design.md §9). Calls stored before this
-- migration keep null: they were never priced.
ALTER TABLE model_calls ADD COLUMN estimated_cost_usd REAL;

-- Rewrites a replica table in (org_id, ts) order after a build: a build copies
-- rows in seq order, which need not be time order (an agent's batch of old
-- events, an import), and then every row group spans the whole time range, so
-- a 7-day window reads as much as a 90-day one. Sorted, DuckDB's zone maps skip
-- the row groups of other organizations and other weeks; later catch-ups
-- append live rows, which arrive in about time order. (The copy's columns
-- are nullable: the merges never relied on NOT NULL.) {table} is the table.

-- name: sort_table
CREATE OR REPLACE TABLE {table} AS SELECT * FROM {table} ORDER BY org_id, ts;

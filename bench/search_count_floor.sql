-- The least a true count of a common word's matches costs on PostgreSQL: the matches counted by
-- kind, with no rank and no page, first in the search index itself, then in a table that holds
-- nothing but each entry's id, kind and tsvector (the narrowest table a GIN index can count in).
-- PostgreSQL checks each match's visibility on its table page, so a count reads every page that
-- holds a match, however narrow the rows.
--
-- Run on the database bench/search.py built (300,000 results), after it:
--   psql -h 127.0.0.1 -U postgres -d bench_search -f bench/search_count_floor.sql
-- psql prints each statement's time; each count runs three times.
\timing on
SET jit = off;
DROP TABLE IF EXISTS bench_vectors;
CREATE TABLE bench_vectors AS SELECT id, kind, vector FROM records_searchentry;
CREATE INDEX bench_vectors_vector ON bench_vectors USING gin (vector);
VACUUM ANALYZE bench_vectors;
SELECT pg_size_pretty(pg_relation_size('records_searchentry')) AS index_table,
       pg_size_pretty(pg_relation_size('bench_vectors')) AS vectors_only;
\echo 'fine-tuned (147,000 matches), in the search index'
SELECT kind, count(*) FROM records_searchentry WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM records_searchentry WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM records_searchentry WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
\echo 'fine-tuned (147,000 matches), vectors only'
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
\echo 'MCC (60,120 matches), vectors only'
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'mcc'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'mcc'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'mcc'::tsquery GROUP BY kind;
\echo 'promoter (39,811 matches), vectors only'
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'promot'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'promot'::tsquery GROUP BY kind;
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'promot'::tsquery GROUP BY kind;
\echo 'promoter, vectors only, with the text rank of every match (what ordering them by relevance reads)'
SELECT count(*), max(ts_rank(vector, 'promot'::tsquery)) FROM bench_vectors WHERE vector @@ 'promot'::tsquery;
SELECT count(*), max(ts_rank(vector, 'promot'::tsquery)) FROM bench_vectors WHERE vector @@ 'promot'::tsquery;
SELECT count(*), max(ts_rank(vector, 'promot'::tsquery)) FROM bench_vectors WHERE vector @@ 'promot'::tsquery;
\echo 'promoter, vectors only, page 400 of its matches best first (what a deep page reads)'
SELECT id FROM bench_vectors WHERE vector @@ 'promot'::tsquery ORDER BY ts_rank(vector, 'promot'::tsquery) DESC, id LIMIT 20 OFFSET 7980;
SELECT id FROM bench_vectors WHERE vector @@ 'promot'::tsquery ORDER BY ts_rank(vector, 'promot'::tsquery) DESC, id LIMIT 20 OFFSET 7980;
SELECT id FROM bench_vectors WHERE vector @@ 'promot'::tsquery ORDER BY ts_rank(vector, 'promot'::tsquery) DESC, id LIMIT 20 OFFSET 7980;
\echo 'the plan of the vectors-only count of fine-tuned'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
DROP TABLE bench_vectors;

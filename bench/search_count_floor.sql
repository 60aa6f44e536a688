-- The least a true count of a common word's matches costs on PostgreSQL: the matches counted by
-- kind, with no rank and no page, first in the search index itself, then in a table that holds
-- nothing but each entry's id, kind and tsvector (the narrowest table a GIN index can count in).
-- PostgreSQL checks each match's visibility on its table page, so a count reads every page that
-- holds a match, however narrow the rows.
--
-- Run on the database bench/search.py built (300,000 results), after it:
--   psql -h 127.0.0.1 -U postgres -d bench_search -f bench/search_count_floor.sql
-- Each statement runs three times; a NOTICE line prints its three times.
SET jit = off;
SET client_min_messages = notice;
DROP TABLE IF EXISTS bench_vectors;
CREATE TABLE bench_vectors AS SELECT id, kind, vector FROM records_searchentry;
CREATE INDEX bench_vectors_vector ON bench_vectors USING gin (vector);
VACUUM ANALYZE bench_vectors;
SELECT pg_size_pretty(pg_relation_size('records_searchentry')) AS index_table,
       pg_size_pretty(pg_relation_size('bench_vectors')) AS vectors_only;

CREATE FUNCTION pg_temp.timed(label text, statement text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz;
    times text := '';
BEGIN
    FOR i IN 1..3 LOOP
        started := clock_timestamp();
        EXECUTE statement;
        times := times || to_char(extract(epoch FROM clock_timestamp() - started) * 1000, 'FM99990.0') || ' ms  ';
    END LOOP;
    RAISE NOTICE '%: %', label, times;
END
$$;

SELECT pg_temp.timed('fine-tuned (147,000 matches), counted in the search index',
    $q$SELECT kind, count(*) FROM records_searchentry WHERE vector @@ 'finetun'::tsquery GROUP BY kind$q$);
SELECT pg_temp.timed('fine-tuned (147,000 matches), counted in the vectors only',
    $q$SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'finetun'::tsquery GROUP BY kind$q$);
SELECT pg_temp.timed('MCC (60,120 matches), counted in the vectors only',
    $q$SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'mcc'::tsquery GROUP BY kind$q$);
SELECT pg_temp.timed('promoter (39,811 matches), counted in the vectors only',
    $q$SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'promot'::tsquery GROUP BY kind$q$);
SELECT pg_temp.timed('promoter, counted with the text rank of every match (what ordering them reads)',
    $q$SELECT count(*), max(ts_rank(vector, 'promot'::tsquery)) FROM bench_vectors WHERE vector @@ 'promot'::tsquery$q$);
SELECT pg_temp.timed('promoter, page 400 of its matches best first (what a deep page reads)',
    $q$SELECT id FROM bench_vectors WHERE vector @@ 'promot'::tsquery
       ORDER BY ts_rank(vector, 'promot'::tsquery) DESC, id LIMIT 20 OFFSET 7980$q$);

-- The search's scoring of every match (text rank; the named bonus from the names' vector there,
-- from the vector's A weights here; the stable id and name-key bonuses there), counted by kind.
CREATE FUNCTION pg_temp.scored(word text, lexeme text, word_key text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_temp.timed(word || ', scored in the search index', format(
        $q$SELECT kind, count(*), max(score) FROM (SELECT kind, ts_rank('{0.1,0.2,0.4,1.0}', vector, %1$L::tsquery, 32)
           + CASE WHEN name_vector @@ %1$L::tsquery THEN 5 ELSE 0 END + CASE WHEN stable_id = %2$L THEN 100 ELSE 0 END
           + CASE WHEN name_keys LIKE %3$L THEN 20 ELSE 0 END AS score
           FROM records_searchentry WHERE vector @@ %1$L::tsquery) scored GROUP BY kind$q$,
        lexeme, word, ' ' || word_key || ' '));
    PERFORM pg_temp.timed(word || ', scored in the vectors only', format(
        $q$SELECT kind, count(*), max(score) FROM (SELECT kind, ts_rank('{0.1,0.2,0.4,1.0}', vector, %1$L::tsquery, 32)
           + CASE WHEN vector @@ %2$L::tsquery THEN 5 ELSE 0 END AS score
           FROM bench_vectors WHERE vector @@ %1$L::tsquery) scored GROUP BY kind$q$,
        lexeme, lexeme || ':A'));
END
$$;
SELECT pg_temp.scored('promoter', 'promot', 'promoter');
SELECT pg_temp.scored('fine-tuned', 'finetun', 'finetuned');

-- The plan of the vectors-only count of fine-tuned: which pages it reads.
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT kind, count(*) FROM bench_vectors WHERE vector @@ 'finetun'::tsquery GROUP BY kind;
DROP TABLE bench_vectors;

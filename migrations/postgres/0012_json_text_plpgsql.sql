-- planbridge_json_text (0002) in PL/pgSQL, same result. As a SQL function it cannot be inlined (it
-- is IMMUTABLE and calls the STABLE to_json), so every call of a generated `json` column ran it
-- through a SQL function executor of its own: ~23,500 calls per 20,000 events ingested (the
-- ingest bench's mix, pg_stat_statements), ~7 µs each against ~2 µs for a PL/pgSQL call
-- (issue 32). The generated columns keep calling it by the same signature.
CREATE OR REPLACE FUNCTION planbridge_json_text(value text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
  AS $$ BEGIN RETURN coalesce(to_json(value)::text, 'null'); END $$;

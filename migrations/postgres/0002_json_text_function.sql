-- A text value as JSON text ('null' for NULL), for the generated snapshot `json` columns
-- (SnapshotRowJson.ts). PostgreSQL accepts only IMMUTABLE functions in a generated column and
-- marks `to_json` STABLE (it serves every type, some of whose output depends on settings); for
-- text its output depends on nothing but the value.
CREATE FUNCTION planbridge_json_text(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(to_json(value)::text, 'null') $$;

-- Appends without a cluster-wide lock (issue 32): what an append transaction does first, in one
-- call, so that the whole append can be one round trip (PgEventLog.ts, PgAppendLoad.ts).
--   1. The append lock (1886152556, "plgl") in SHARED mode: appends never wait for each other on
--      it; a projection rebuild takes it exclusively and so waits for every append and stops them.
--   2. One transaction-level lock per thread of the batch, in a fixed order (two batches that share
--      threads cannot deadlock): the thread's head read or assumed under it is the one the next
--      `thread_seq` follows, and the thread's `seq`s are drawn in its `thread_seq` order.
--   3. The fence (PROTOCOL.md, "The fence"): the batch's lease rows read FOR SHARE (a claim, renewal
--      or release waits for this transaction's end), judged by clock_timestamp() after the locks.
--      `fences[i]` is the fence the writer proves for `thread_ids[i]`, or NULL when it proves none
--      (then no other replica may hold the thread live). A lost lease raises SQLSTATE PBF01.
CREATE FUNCTION planbridge_begin_append(origin text, thread_ids text[], fences bigint[]) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  k bigint;
  l record;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(1886152556);
  FOR k IN SELECT DISTINCT hashtextextended(t, 1886152556) FROM unnest(thread_ids) AS t ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(k);
  END LOOP;
  PERFORM 1 FROM session_leases WHERE thread_id = ANY(thread_ids) ORDER BY thread_id FOR SHARE;
  FOR l IN
    SELECT u.t, u.f, s.owner, s.fence, s.expires_at > clock_timestamp() AS live
    FROM unnest(thread_ids, fences) AS u(t, f) LEFT JOIN session_leases s ON s.thread_id = u.t
  LOOP
    IF l.f IS NULL THEN
      IF l.owner IS NOT NULL AND l.live AND l.owner <> origin THEN
        RAISE EXCEPTION 'thread %: another replica holds its session lease', l.t USING ERRCODE = 'PBF01';
      END IF;
    ELSIF l.owner IS NULL OR l.owner <> origin THEN
      RAISE EXCEPTION 'thread %: this replica''s session lease (fence %) is lost: it was taken over or released', l.t, l.f
        USING ERRCODE = 'PBF01';
    ELSIF l.fence <> l.f THEN
      RAISE EXCEPTION 'thread %: this replica''s session lease (fence %) is lost: it was claimed again, fence %', l.t, l.f, l.fence
        USING ERRCODE = 'PBF01';
    ELSIF NOT l.live THEN
      RAISE EXCEPTION 'thread %: this replica''s session lease (fence %) is lost: it expired', l.t, l.f
        USING ERRCODE = 'PBF01';
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint
-- A row's inserting or updating transaction (its `xmin`, 32 bits) as an xid8 (with its epoch), for
-- pg_visible_in_snapshot: the epoch of the current snapshot's xmax, or the one before for an xid
-- above it (an xid of the previous epoch).
CREATE FUNCTION planbridge_xid8(x xid) RETURNS xid8
  LANGUAGE sql STABLE AS $$
  SELECT ((greatest(0, CASE WHEN x::text::bigint <= (c & 4294967295) THEN c >> 32 ELSE (c >> 32) - 1 END) << 32)
    | x::text::bigint)::text::xid8
  FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS c) AS now $$;

-- 0008_test_hosts.sql - schema version 7 to 8: the hosts of each test.
--
-- A test ran on a group of the job's ranks (tests.members, ranges such as
-- '0-3' or '4,6'; NULL in runs recorded before version 3: the whole job).
-- test_hosts_v names the hosts of those ranks, one row per test and host,
-- so that a host's figures are the figures of the tests it took part in
-- (history --host, busbw_by_host.sql, slowest_nodes.sql), not the best
-- group of a run it was in.

CREATE VIEW test_hosts_v AS
WITH RECURSIVE parts(test_id, run_id, part, rest) AS (
	SELECT t.id, t.run_id, '',
		coalesce(t.members, '0-' || (r.nranks - 1)) || ','
	FROM tests t JOIN runs r ON r.id = t.run_id
	UNION ALL
	SELECT test_id, run_id, substr(rest, 1, instr(rest, ',') - 1),
		substr(rest, instr(rest, ',') + 1)
	FROM parts WHERE rest <> ''
), spans(test_id, run_id, lo, hi) AS (
	SELECT test_id, run_id,
		CAST(iif(instr(part, '-') > 0,
			substr(part, 1, instr(part, '-') - 1), part) AS INTEGER),
		CAST(iif(instr(part, '-') > 0,
			substr(part, instr(part, '-') + 1), part) AS INTEGER)
	FROM parts WHERE part <> ''
)
SELECT DISTINCT s.test_id, s.run_id, k.host
FROM spans s
	JOIN ranks k ON k.run_id = s.run_id AND k.rank BETWEEN s.lo AND s.hi;

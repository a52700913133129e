-- wrong_data.sql - every measurement that found wrong data, with the
-- first wrong element and the host of the rank that held it.
--   sqlite3 -header -column results.db < wrong_data.sql
SELECT r.started_at,
	r.uuid AS run_uuid,
	t.name AS test,
	t.dtype,
	m.size_bytes,
	m.in_place,
	m.wrong,
	m.first_wrong_rank,
	k.host AS first_wrong_host,
	m.first_wrong_index,
	m.first_wrong_expected,
	m.first_wrong_got
FROM measurements m
	JOIN tests t ON t.id = m.test_id
	JOIN runs r ON r.id = t.run_id
	LEFT JOIN ranks k ON k.run_id = r.id AND k.rank = m.first_wrong_rank
WHERE m.wrong > 0
ORDER BY r.started_at DESC, t.test_index, m.size_bytes;

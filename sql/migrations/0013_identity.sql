-- 0013_identity.sql - schema version 12 to 13: the database's identity.
--
-- A run that cannot write its results keeps them in a journal named by
-- the database's identity and the run (shakedown-db(5), JOURNALS), so that
-- the journal of one database is never taken for, nor mixed into, that of
-- another with the same file name.  The identity is a random UUID (version
-- 4) made once, here or when the file is created, and never changed; a
-- salvaged copy (db recover --into) keeps it.
CREATE TABLE meta (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
INSERT INTO meta (key, value) VALUES ('database_uuid',
	(SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' ||
		substr(h, 14, 3) || '-' ||
		substr('89ab', 1 + (abs(random()) % 4), 1) ||
		substr(h, 18, 3) || '-' || substr(h, 21, 12)
	 FROM (SELECT lower(hex(randomblob(16))) AS h)));

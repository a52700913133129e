-- 0003_members.sql - schema version 2 -> 3.
--
-- A test may run on a group of the job's ranks (a scope such as split:2
-- runs one group per block of ranks, each recorded as its own test): keep
-- which ranks took part.  Runs recorded before have NULL here.

ALTER TABLE tests ADD COLUMN members TEXT;

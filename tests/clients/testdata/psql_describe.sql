-- Objects and describe commands run through psql 15 against streamsql and
-- PostgreSQL; psql_test.go compares the outputs.
CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, score numeric(6,2) DEFAULT 0, ts timestamptz, tags text[]);
COMMENT ON TABLE t IS 'scores';
COMMENT ON COLUMN t.score IS 'the score';
CREATE TABLE u (a int, b varchar(10), c char(3), d double precision, e bigint, f date, g interval, h jsonb, i bytea, j boolean, k time, l timestamp, UNIQUE (a, b));
CREATE VIEW v AS SELECT id, name FROM t WHERE score > 1;
CREATE MATERIALIZED VIEW m AS SELECT name, count(*) AS n FROM t GROUP BY name;
CREATE SCHEMA s2;
CREATE TABLE s2.w (x int PRIMARY KEY);
CREATE FUNCTION addone(int) RETURNS int LANGUAGE sql IMMUTABLE STRICT AS 'SELECT $1 + 1';
CREATE FUNCTION s2.names_of(d int) RETURNS SETOF text LANGUAGE sql STABLE AS 'SELECT name FROM t WHERE id > d';
CREATE FUNCTION s2.stats(d int) RETURNS TABLE (n bigint, total numeric) LANGUAGE sql AS 'SELECT count(*), sum(score) FROM t WHERE id > d';
\dn
\dt
\dv
\dm
\ds
\d
\d+
\df
\df s2.*
\df+ addone
\di
\dx
\d t
\d+ t
\d u
\d v
\d+ v
\d m
\d+ m
\dt s2.*
\d s2.w
\di+
\dt+
\dm+
\dv+
\sv v
\sf addone
\sf s2.stats

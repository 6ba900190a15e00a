# pyclient.py drives psycopg 3, psycopg2 or SQLAlchemy (over psycopg2)
# against the server named by a libpq connection string and prints a
# transcript, one fact a line, that the Go test compares with the same
# program's transcript against PostgreSQL 15. Lines starting with "FAIL" are
# checks the program makes itself (values read back differ from those
# written, text and binary reads disagree).
#
# Usage: /usr/bin/python3 pyclient.py psycopg|psycopg2|sqlalchemy DSN [streamsql]
import datetime
import decimal
import json
import sys

mode, dsn = sys.argv[1], sys.argv[2]
streamsql = len(sys.argv) > 3 and sys.argv[3] == "streamsql"

DDL = [
    "CREATE TABLE pt (id integer PRIMARY KEY, b boolean, i2 smallint, i8 bigint, f4 real, f8 double precision,"
    " n numeric(12,3), t text NOT NULL, vc varchar(20), ch char(4), by bytea, d date, tm time, ts timestamp,"
    " tz timestamptz, iv interval, j json, jb jsonb, ia integer[], ta text[])",
    "CREATE VIEW pv AS SELECT id, t FROM pt WHERE id > 1",
    "CREATE MATERIALIZED VIEW pm AS SELECT b, count(*) AS n FROM pt GROUP BY b",
]

UTC = datetime.timezone.utc


def row(i):
    return (
        i, i % 2 == 0, -7 * i, 1 << (30 + i), i + 0.25, i / 3.0, decimal.Decimal("%d.125" % i),
        "text %d é" % i, None if i == 3 else "vc%d" % i, "c%d  " % i, bytes([i, 0, 255]),
        datetime.date(2024, i, 10 + i), datetime.time(12, 30 + i, i), datetime.datetime(2024, 2, i, 10, 11, 12, 500000),
        datetime.datetime(2024, 3, i, 8, 0, tzinfo=UTC), datetime.timedelta(days=i, hours=2),
        {"a": i}, {"k": [i, True], "b": None}, [i, None, -i], ["x%d" % i, "y,z"],
    )


def norm(v):
    if isinstance(v, float):
        return round(v, 5)
    if isinstance(v, (bytes, memoryview, bytearray)):
        return bytes(v)
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(UTC)
    if isinstance(v, str) and v.startswith("{") and v.endswith("}"):
        try:
            return json.loads(v)
        except ValueError:
            return v
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def check_rows(what, rows):
    """Compares rows read back with the rows written and prints them."""
    for r in rows:
        want = row(r[0])
        got = tuple(norm(v) for v in r)
        exp = tuple(norm(v) for v in want)
        for k, (g, e) in enumerate(zip(got, exp)):
            if k == 9:  # char(4): padded to its length
                e = e.strip().ljust(4)
            if g != e:
                print("FAIL %s row %d column %d: got %r want %r" % (what, r[0], k, g, e))
        print("%s %r" % (what, got))


def flush(cur):
    cur.execute("FLUSH" if streamsql else "REFRESH MATERIALIZED VIEW pm")


def run_psycopg():
    import psycopg
    from psycopg.rows import tuple_row

    with psycopg.connect(dsn, prepare_threshold=5) as conn:
        cur = conn.cursor()
        conn.autocommit = True  # CREATE MATERIALIZED VIEW runs outside transaction blocks
        for q in DDL:
            cur.execute(q)
        conn.autocommit = False
        ins = ("INSERT INTO pt VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
               " %s::json, %s::jsonb, %s, %s)")
        from psycopg.types.json import Json, Jsonb
        for i in range(1, 9):
            r = list(row(i))
            r[16], r[17] = Json(r[16]), Jsonb(r[17])
            cur.execute(ins, r)
        conn.commit()
        print("prepared", sorted(conn._prepared._names.values()) != [])
        q = "SELECT * FROM pt WHERE id >= %s ORDER BY id"
        first = None
        for run in range(7):  # prepared after 5 executions
            cur.execute(q, (1,))
            rows = cur.fetchall()
            if first is None:
                first = rows
                for d in cur.description:
                    print("column", d.name, d.type_code)
                check_rows("text", rows)
            elif rows != first:
                print("FAIL text run", run, "differs")
        bcur = conn.cursor(binary=True)
        for run in range(7):
            bcur.execute(q, (1,))
            rows = bcur.fetchall()
            if rows != first:
                print("FAIL binary run", run, "differs:", rows[:1], first[:1])
        check_rows("binary", rows)
        # server-side parameters: the types psycopg declares for Python values.
        cur.execute("SELECT %s::text, %s::int8, %s::float8, %s, %s, %s",
                    ("a", 1, 1.5, decimal.Decimal("2.50"), datetime.date(2024, 1, 2), [1, 2]))
        print("params", cur.fetchone())
        # uuid: a parameter psycopg sends as uuid, read in text and binary;
        # unnest of two array parameters (a bulk-insert idiom).
        import uuid
        u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
        cur.execute("SELECT %s, %s::text, %s = %s::uuid", (u, u, u, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"))
        print("uuid", cur.fetchone())
        bcur.execute("SELECT %s", (u,))
        print("uuid binary", bcur.fetchone())
        cur.execute("SELECT * FROM unnest(%s::int[], %s::text[]) AS t(a, b) ORDER BY a", ([1, 2], ["x", "y"]))
        print("unnest zip", cur.fetchall())
        # A server-side (named) cursor reads through a portal.
        with conn.cursor(name="big") as sc:
            sc.itersize = 50
            sc.execute("SELECT g FROM generate_series(1, 1000) AS g")
            print("named cursor", sum(r[0] for r in sc))
        conn.commit()
        flush(cur)
        cur.execute("SELECT * FROM pm ORDER BY b")
        print("matview", cur.fetchall())
        metadata(cur)
        if streamsql:
            # Follow the materialized view through a named cursor over
            # SUBSCRIBE: its rows, then the change of an insert elsewhere.
            with conn.cursor(name="sub") as sc:
                sc.execute("SUBSCRIBE TO pm")
                got = sc.fetchmany(2)
                with psycopg.connect(dsn, autocommit=True) as w:
                    w.execute("INSERT INTO pt (id, t) VALUES (100, 'more')")
                got += sc.fetchmany(1)
            conn.commit()
            for line in sorted("%s %s %s" % (r[0], r[2], r[3]) for r in got):
                print("stream sub", line)
            cur.execute("DELETE FROM pt WHERE id = 100")
            conn.commit()
        try:
            cur.execute("SELECT 1/0")
            print("FAIL no error")
        except psycopg.Error as e:
            print("error", e.sqlstate, str(e).splitlines()[0])
        conn.rollback()
        try:
            cur.execute("SELECT * FROM nope WHERE a = %s", (1,))
        except psycopg.Error as e:
            print("error", e.sqlstate, str(e).splitlines()[0])
        conn.rollback()
        cur.execute("SELECT count(*) FROM pt")
        print("after errors", cur.fetchone())


def metadata(cur):
    cur.execute("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
    print("tables", cur.fetchall())
    cur.execute("SELECT table_name, column_name, data_type, is_nullable, character_maximum_length, numeric_precision"
                " FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")
    for r in cur.fetchall():
        print("column", r)
    cur.execute("SELECT matviewname, definition IS NOT NULL FROM pg_matviews WHERE schemaname = 'public'")
    print("matviews", cur.fetchall())


def run_psycopg2():
    import psycopg2
    import psycopg2.extras

    conn = psycopg2.connect(dsn)
    cur = conn.cursor()
    conn.autocommit = True  # CREATE MATERIALIZED VIEW runs outside transaction blocks
    for q in DDL:
        cur.execute(q)
    conn.autocommit = False
    ins = ("INSERT INTO pt VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
           " %s::json, %s::jsonb, %s, %s)")
    for i in range(1, 9):
        r = list(row(i))
        r[16], r[17] = psycopg2.extras.Json(r[16]), psycopg2.extras.Json(r[17])
        cur.execute(ins, r)
    conn.commit()
    cur.execute("SELECT * FROM pt WHERE id >= %s ORDER BY id", (1,))
    for d in cur.description:
        print("column", d.name, d.type_code)
    rows = cur.fetchall()
    # psycopg2 reads arrays of text as lists, intervals as timedelta.
    check_rows("text", rows)
    with conn.cursor(name="big") as sc:
        sc.itersize = 50
        sc.execute("SELECT g FROM generate_series(1, 1000) AS g")
        print("named cursor", sum(r[0] for r in sc))
    conn.commit()
    flush(cur)
    cur.execute("SELECT * FROM pm ORDER BY b")
    print("matview", cur.fetchall())
    metadata(cur)
    try:
        cur.execute("SELECT 1/0")
        print("FAIL no error")
    except psycopg2.Error as e:
        print("error", e.pgcode, e.pgerror.splitlines()[0])
    conn.rollback()
    cur.execute("SELECT count(*) FROM pt")
    print("after errors", cur.fetchone())
    conn.close()


def run_sqlalchemy():
    import sqlalchemy as sa

    import psycopg2
    engine = sa.create_engine("postgresql+psycopg2://", creator=lambda: psycopg2.connect(dsn))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        for q in DDL:
            c.execute(sa.text(q))
    with engine.begin() as c:
        c.execute(sa.text("INSERT INTO pt (id, t, n) VALUES (:id, :t, :n)"),
                  [{"id": i, "t": "t%d" % i, "n": decimal.Decimal(i)} for i in range(1, 4)])
    insp = sa.inspect(engine)
    print("schemas", [s for s in insp.get_schema_names() if s == "public"])
    print("tables", insp.get_table_names())
    print("views", insp.get_view_names())
    try:
        print("matviews", insp.get_materialized_view_names())
    except AttributeError:
        pass
    for t in insp.get_table_names() + insp.get_view_names():
        for col in insp.get_columns(t):
            print("column", t, col["name"], str(col["type"]), col["nullable"], col["default"])
    print("pk", insp.get_pk_constraint("pt"))
    print("fks", insp.get_foreign_keys("pt"))
    print("indexes", insp.get_indexes("pt"))
    print("unique", insp.get_unique_constraints("pt"))
    print("comment", insp.get_table_comment("pt"))
    print("viewdef", insp.get_view_definition("pv") is not None)
    if streamsql:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.execute(sa.text("CREATE SOURCE src WITH (connector = 'nexmark', table = 'bid', events_per_second = '10')"))
        insp = sa.inspect(engine)
        print("stream foreign tables", insp.get_foreign_table_names())
        print("stream columns", [(col["name"], str(col["type"])) for col in insp.get_columns("src")][:3])
    md = sa.MetaData()
    pt = sa.Table("pt", md, autoload_with=engine)
    with engine.connect() as c:
        rows = c.execute(sa.select(pt.c.id, pt.c.t, pt.c.n).where(pt.c.id >= 2).order_by(pt.c.id)).fetchall()
        print("select", rows)
        try:
            c.execute(sa.text("SELECT * FROM nope"))
        except sa.exc.ProgrammingError as e:
            print("error", e.orig.pgcode)
    with engine.connect() as c:
        print("after errors", c.execute(sa.text("SELECT count(*) FROM pt")).scalar())


{"psycopg": run_psycopg, "psycopg2": run_psycopg2, "sqlalchemy": run_sqlalchemy}[mode]()
print("done")

// ClientTest drives pgjdbc 42 against a server given as a JDBC URL and
// prints a transcript (one fact a line) that the Go test compares with the
// same program's transcript against PostgreSQL 15. Lines starting with
// "FAIL" are failed checks the program makes on its own (values read back
// differ from those written, text and binary reads disagree).
//
// Usage: java -cp postgresql.jar ClientTest.java URL USER PASSWORD [streamsql]
import java.math.BigDecimal;
import java.sql.*;
import java.util.*;

public class ClientTest {
    static List<String> out = new ArrayList<>();

    static void say(String s) { System.out.println(s); }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        boolean streamsql = args.length > 3 && args[3].equals("streamsql");
        Properties p = new Properties();
        p.setProperty("user", args[1]);
        p.setProperty("password", args[2]);
        p.setProperty("prepareThreshold", "5");
        try (Connection c = DriverManager.getConnection(url, p)) {
            Statement st = c.createStatement();
            st.execute("CREATE TABLE jt (id integer PRIMARY KEY, b boolean, i2 smallint, i8 bigint, f4 real, f8 double precision,"
                + " n numeric(12,3), t text NOT NULL, vc varchar(20), ch char(4), by bytea, d date, tm time, ts timestamp,"
                + " tz timestamptz, iv interval, j json, jb jsonb, ia integer[], ta text[])");
            st.execute("COMMENT ON TABLE jt IS 'all the types'");
            st.execute("CREATE VIEW jv AS SELECT id, t FROM jt WHERE id > 1");
            st.execute("CREATE MATERIALIZED VIEW jm AS SELECT b, count(*) AS n FROM jt GROUP BY b");
            insertRows(c);
            st.execute(streamsql ? "FLUSH" : "REFRESH MATERIALIZED VIEW jm");
            readBack(c);
            fetchSize(c);
            metadata(c, streamsql);
            if (streamsql) subscribe(c, url, p);
            errors(c);
        }
        say("done");
    }

    static final String INSERT = "INSERT INTO jt VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::interval, ?::json, ?::jsonb, ?, ?)";

    // insertRows inserts 8 rows through one PreparedStatement: after 5
    // executions pgjdbc switches to a named server-side statement.
    static void insertRows(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            for (int i = 1; i <= 8; i++) {
                int k = 1;
                ps.setInt(k++, i);
                ps.setBoolean(k++, i % 2 == 0);
                ps.setShort(k++, (short) (i * -7));
                ps.setLong(k++, 1L << (30 + i));
                ps.setFloat(k++, i + 0.25f);
                ps.setDouble(k++, i / 3.0);
                ps.setBigDecimal(k++, new BigDecimal(i + ".125"));
                ps.setString(k++, "text " + i + " é");
                if (i == 3) ps.setNull(k++, Types.VARCHAR); else ps.setString(k++, "vc" + i);
                ps.setString(k++, "c" + i);
                ps.setBytes(k++, new byte[]{(byte) i, 0, (byte) 255});
                ps.setDate(k++, java.sql.Date.valueOf("2024-0" + i + "-1" + i));
                ps.setTime(k++, java.sql.Time.valueOf("12:3" + i + ":0" + i));
                ps.setTimestamp(k++, java.sql.Timestamp.valueOf("2024-02-0" + i + " 10:11:12.5"));
                ps.setObject(k++, java.time.OffsetDateTime.parse("2024-03-0" + i + "T10:00:00+02:00"));
                ps.setString(k++, i + " days 02:00:00");
                ps.setString(k++, "{\"a\": " + i + "}");
                ps.setString(k++, "{\"k\": [" + i + ", true], \"b\": null}");
                ps.setArray(k++, c.createArrayOf("integer", new Integer[]{i, null, -i}));
                ps.setArray(k++, c.createArrayOf("text", new String[]{"x" + i, "y,z"}));
                int n = ps.executeUpdate();
                if (n != 1) say("FAIL insert " + i + " updated " + n);
            }
        }
        say("inserted 8");
    }

    static String render(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= md.getColumnCount(); i++) {
            Object o = rs.getObject(i);
            String v;
            if (o == null) v = "NULL";
            else if (o instanceof byte[]) v = Arrays.toString((byte[]) o);
            else if (o instanceof java.sql.Array) v = Arrays.deepToString((Object[]) ((java.sql.Array) o).getArray());
            else v = o.toString();
            sb.append(md.getColumnName(i)).append('=').append(v).append(' ');
        }
        return sb.toString().trim();
    }

    // readBack reads the table 7 times through one PreparedStatement: the
    // first reads are text, later ones named and binary; all must agree.
    static void readBack(Connection c) throws SQLException {
        List<String> first = null;
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM jt WHERE id >= ? ORDER BY id")) {
            for (int run = 0; run < 7; run++) {
                ps.setInt(1, 1);
                List<String> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) rows.add(render(rs));
                }
                if (first == null) {
                    first = rows;
                    ResultSetMetaData md = ps.getMetaData();
                    for (int i = 1; i <= md.getColumnCount(); i++)
                        say("column " + md.getColumnName(i) + " " + md.getColumnTypeName(i) + " " + md.getColumnType(i)
                            + " precision=" + md.getPrecision(i) + " scale=" + md.getScale(i)
                            + " nullable=" + md.isNullable(i) + " base=" + md.unwrap(org.postgresql.PGResultSetMetaData.class).getBaseTableName(i)
                            + "." + md.unwrap(org.postgresql.PGResultSetMetaData.class).getBaseColumnName(i));
                    for (String r : rows) say("row " + r);
                } else if (!rows.equals(first)) {
                    say("FAIL run " + run + " differs: " + rows);
                }
            }
            // After prepareThreshold executions the statement is a named
            // server-side one and its results come in binary.
            say("server prepared " + ps.unwrap(org.postgresql.PGStatement.class).isUseServerPrepare());
        }
        // getString on every column (what a text read gives).
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM jt WHERE id = 2")) {
            ResultSetMetaData md = rs.getMetaData();
            while (rs.next())
                for (int i = 1; i <= md.getColumnCount(); i++) say("string " + md.getColumnName(i) + "=" + rs.getString(i));
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM jm ORDER BY b")) {
            while (rs.next()) say("matview " + render(rs));
        }
    }

    // fetchSize reads 1000 rows 64 at a time through a named portal.
    static void fetchSize(Connection c) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.setFetchSize(64);
            long sum = 0;
            int n = 0;
            try (ResultSet rs = st.executeQuery("SELECT g FROM generate_series(1, 1000) AS g")) {
                while (rs.next()) { sum += rs.getLong(1); n++; }
            }
            say("fetched " + n + " sum " + sum);
        }
        c.commit();
        c.setAutoCommit(true);
    }

    static void dump(String what, ResultSet rs, String... cols) throws SQLException {
        while (rs.next()) {
            StringBuilder sb = new StringBuilder(what);
            for (String col : cols) sb.append(' ').append(col).append('=').append(rs.getString(col));
            say(sb.toString());
        }
        rs.close();
    }

    static void metadata(Connection c, boolean streamsql) throws SQLException {
        DatabaseMetaData md = c.getMetaData();
        say("product " + md.getDatabaseProductName() + " major=" + md.getDatabaseMajorVersion());
        dump("schema", md.getSchemas(), "TABLE_SCHEM");
        dump("table", md.getTables(null, "public", "%", null), "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS");
        dump("tabletype", md.getTableTypes(), "TABLE_TYPE");
        dump("column", md.getColumns(null, "public", "j%", "%"), "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME",
            "COLUMN_SIZE", "DECIMAL_DIGITS", "NULLABLE", "ORDINAL_POSITION", "IS_NULLABLE", "IS_AUTOINCREMENT");
        dump("pk", md.getPrimaryKeys(null, "public", "jt"), "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME");
        dump("index", md.getIndexInfo(null, "public", "jt", false, false), "TABLE_NAME", "NON_UNIQUE", "INDEX_NAME", "COLUMN_NAME");
        Set<String> want = new TreeSet<>(Arrays.asList("bool", "int2", "int4", "int8", "float4", "float8", "numeric", "text",
            "varchar", "bpchar", "bytea", "date", "time", "timestamp", "timestamptz", "interval", "json", "jsonb", "oid", "_int4"));
        try (ResultSet rs = md.getTypeInfo()) {
            while (rs.next()) {
                String name = rs.getString("TYPE_NAME");
                if (want.remove(name)) say("typeinfo " + name + " " + rs.getInt("DATA_TYPE") + " searchable=" + rs.getInt("SEARCHABLE"));
            }
        }
        if (!want.isEmpty()) say("FAIL getTypeInfo lacks " + want);
        if (streamsql) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE SOURCE src WITH (connector = 'nexmark', table = 'bid', events_per_second = '10')");
            }
            dump("streamtable", md.getTables(null, "public", "src", null), "TABLE_NAME", "TABLE_TYPE");
            dump("streamcolumn", md.getColumns(null, "public", "src", "%"), "COLUMN_NAME", "TYPE_NAME");
        }
    }

    // subscribe follows the materialized view jm with SUBSCRIBE through a
    // fetchSize cursor (a named portal read 2 rows at a time): its current
    // rows, then the changes of an INSERT made on another connection.
    static void subscribe(Connection c, String url, Properties p) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.setFetchSize(2);
            try (ResultSet rs = st.executeQuery("SUBSCRIBE TO jm")) {
                List<String> got = new ArrayList<>();
                while (got.size() < 2 && rs.next()) got.add(rs.getString("op") + " " + rs.getString("b") + " " + rs.getLong("n"));
                Collections.sort(got);
                try (Connection w = DriverManager.getConnection(url, p); Statement ws = w.createStatement()) {
                    ws.execute("INSERT INTO jt (id, b, t) VALUES (100, true, 'more')");
                }
                while (got.size() < 4 && rs.next()) got.add(rs.getString("op") + " " + rs.getString("b") + " " + rs.getLong("n"));
                for (String g : got) say("streamsub " + g);
            }
        }
        c.commit();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
            st.execute("DELETE FROM jt WHERE id = 100");
        }
    }

    static void errors(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            try {
                st.executeQuery("SELECT 1/0");
                say("FAIL no error");
            } catch (SQLException e) {
                say("error " + e.getSQLState() + " " + e.getMessage().split("\n")[0]);
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM nope WHERE a = ?")) {
                ps.setInt(1, 1);
                ps.executeQuery();
                say("FAIL no error");
            } catch (SQLException e) {
                say("error " + e.getSQLState() + " " + e.getMessage().split("\n")[0]);
            }
            c.setAutoCommit(false);
            try {
                st.execute("INSERT INTO jt (id, t) VALUES (1, 'dup')");
                say("FAIL no error");
            } catch (SQLException e) {
                say("error " + e.getSQLState());
            }
            c.rollback();
            c.setAutoCommit(true);
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM jt")) {
                rs.next();
                say("after errors count " + rs.getLong(1));
            }
        }
    }
}

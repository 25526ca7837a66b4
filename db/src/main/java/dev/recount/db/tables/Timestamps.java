package dev.recount.db.tables;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collection;

/** timestamptz ⇄ epoch millis, the one conversion every table class uses. */
public final class Timestamps {
    private Timestamps() {}

    public static void bind(PreparedStatement ps, int index, long epochMillis) throws SQLException {
        ps.setObject(index, offsetDateTime(epochMillis));
    }

    /** The value to bind, or to put in an array the driver sends as {@code timestamptz[]}. */
    public static OffsetDateTime offsetDateTime(long epochMillis) {
        return OffsetDateTime.ofInstant(Instant.ofEpochMilli(epochMillis), ZoneOffset.UTC);
    }

    /** {@code epochMillis}, in their order, as a {@code timestamptz[]} to bind. */
    public static Array array(Connection conn, Collection<Long> epochMillis) throws SQLException {
        Object[] values = new Object[epochMillis.size()];
        int i = 0;
        for (long ms : epochMillis) values[i++] = offsetDateTime(ms);
        return conn.createArrayOf("timestamptz", values);
    }

    public static long read(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant().toEpochMilli();
    }

    public static Long readNullable(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant().toEpochMilli();
    }
}

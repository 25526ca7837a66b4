package dev.recount.reconcile;

import dev.recount.db.tables.Timestamps;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * A statement and its parameters, built together so a fragment such as a scope predicate can be repeated in
 * one statement without counting placeholders by hand. Only values are ever bound, never spliced into the text.
 */
final class Sql {
    private interface Binder {
        void bind(PreparedStatement ps, int index, Connection conn) throws SQLException;
    }

    private final StringBuilder text = new StringBuilder();
    private final List<Binder> params = new ArrayList<>();

    Sql add(String fragment) {
        text.append(fragment);
        return this;
    }

    Sql timestamp(long epochMillis) {
        text.append("?::timestamptz");
        params.add((ps, i, c) -> Timestamps.bind(ps, i, epochMillis));
        return this;
    }

    Sql timestamps(List<Long> epochMillis) {
        text.append("?::timestamptz[]");
        params.add((ps, i, c) -> {
            Object[] values = epochMillis.stream()
                    .map(ms -> OffsetDateTime.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC))
                    .toArray();
            ps.setArray(i, c.createArrayOf("timestamptz", values));
        });
        return this;
    }

    Sql bigints(List<Long> values) {
        text.append("?::bigint[]");
        params.add((ps, i, c) -> ps.setArray(i, c.createArrayOf("bigint", values.toArray())));
        return this;
    }

    Sql bigint(long value) {
        text.append("?::bigint");
        params.add((ps, i, c) -> ps.setLong(i, value));
        return this;
    }

    Sql nullableBigint(Long value) {
        text.append("?::bigint");
        params.add((ps, i, c) -> {
            if (value == null) ps.setNull(i, java.sql.Types.BIGINT);
            else ps.setLong(i, value);
        });
        return this;
    }

    Sql numeric(BigDecimal value) {
        text.append("?::numeric");
        params.add((ps, i, c) -> ps.setBigDecimal(i, value));
        return this;
    }

    Sql text(String value) {
        text.append("?::text");
        params.add((ps, i, c) -> ps.setString(i, value));
        return this;
    }

    /** {@code column} lies in the scope: its range and, for a window-set scope, one of its windows. */
    Sql inScope(String column, Scope scope) {
        add(column + " >= ")
                .timestamp(scope.fromMillis())
                .add(" AND " + column + " < ")
                .timestamp(scope.toMillis());
        if (scope.windowStarts() != null)
            add(" AND " + column + " = ANY (").timestamps(scope.windowStarts()).add(")");
        return this;
    }

    PreparedStatement prepare(Connection conn) throws SQLException {
        return prepareWithPrefix(conn, "");
    }

    /** As {@link #prepare}, with {@code prefix} (e.g. "EXPLAIN ANALYZE ") before the text. */
    PreparedStatement prepareWithPrefix(Connection conn, String prefix) throws SQLException {
        PreparedStatement ps = conn.prepareStatement(prefix + text);
        try {
            for (int i = 0; i < params.size(); i++) params.get(i).bind(ps, i + 1, conn);
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    @Override
    public String toString() {
        return text.toString();
    }
}

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
import java.util.stream.Collectors;

/**
 * A statement and its parameters, built together so a fragment such as a scope predicate can be repeated in
 * one statement without counting placeholders by hand. Values are bound, never spliced into the text; the one
 * exception is {@link #inlined()}, for a {@code COPY}, which takes no parameters, and only numbers and instants.
 */
final class Sql {
    private interface Binder {
        void bind(PreparedStatement ps, int index, Connection conn) throws SQLException;
    }

    /**
     * A bound value: where its {@code ?} is in {@link #text}, and its SQL literal when it has one that cannot carry SQL
     * (a number, an instant), else null.
     */
    private record Param(int at, Binder binder, String literal) {}

    private final StringBuilder text = new StringBuilder();
    private final List<Param> params = new ArrayList<>();

    private Sql param(String cast, Binder binder, String literal) {
        params.add(new Param(text.length(), binder, literal));
        text.append('?').append(cast);
        return this;
    }

    Sql add(String fragment) {
        text.append(fragment);
        return this;
    }

    Sql timestamp(long epochMillis) {
        return param(
                "::timestamptz",
                (ps, i, c) -> Timestamps.bind(ps, i, epochMillis),
                "'" + Instant.ofEpochMilli(epochMillis) + "'");
    }

    Sql timestamps(List<Long> epochMillis) {
        String literal = epochMillis.stream()
                .map(ms -> Instant.ofEpochMilli(ms).toString())
                .collect(Collectors.joining(",", "'{", "}'"));
        return param(
                "::timestamptz[]",
                (ps, i, c) -> {
                    Object[] values = epochMillis.stream()
                            .map(ms -> OffsetDateTime.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC))
                            .toArray();
                    ps.setArray(i, c.createArrayOf("timestamptz", values));
                },
                literal);
    }

    Sql bigints(List<Long> values) {
        return param(
                "::bigint[]",
                (ps, i, c) -> ps.setArray(i, c.createArrayOf("bigint", values.toArray())),
                values.stream().map(String::valueOf).collect(Collectors.joining(",", "'{", "}'")));
    }

    Sql bigint(long value) {
        return param("::bigint", (ps, i, c) -> ps.setLong(i, value), "(" + value + ")");
    }

    Sql nullableBigint(Long value) {
        return param(
                "::bigint",
                (ps, i, c) -> {
                    if (value == null) ps.setNull(i, java.sql.Types.BIGINT);
                    else ps.setLong(i, value);
                },
                value == null ? "NULL" : "(" + value + ")");
    }

    Sql numeric(BigDecimal value) {
        return param("::numeric", (ps, i, c) -> ps.setBigDecimal(i, value), "(" + value.toPlainString() + ")");
    }

    Sql text(String value) {
        return param("::text", (ps, i, c) -> ps.setString(i, value), null);
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

    /**
     * The statement with its values written in as literals, for where PostgreSQL takes no parameters ({@code COPY
     * (query) TO STDOUT}). Only numbers and instants, which this class formats itself: a statement with a text value
     * is refused, so nothing a user typed ends up in the text.
     */
    String inlined() {
        StringBuilder out = new StringBuilder(text.length() + 32 * params.size());
        int from = 0;
        for (int i = 0; i < params.size(); i++) {
            Param p = params.get(i);
            if (p.literal() == null) throw new IllegalStateException("parameter " + (i + 1) + " has no safe literal");
            out.append(text, from, p.at()).append(p.literal());
            from = p.at() + 1;
        }
        return out.append(text, from, text.length()).toString();
    }

    /** As {@link #prepare}, with {@code prefix} (e.g. "EXPLAIN ANALYZE ") before the text. */
    PreparedStatement prepareWithPrefix(Connection conn, String prefix) throws SQLException {
        PreparedStatement ps = conn.prepareStatement(prefix + text);
        try {
            for (int i = 0; i < params.size(); i++) params.get(i).binder().bind(ps, i + 1, conn);
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

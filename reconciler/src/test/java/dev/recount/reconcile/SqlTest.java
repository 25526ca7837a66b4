package dev.recount.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class SqlTest {
    private static final long T = Instant.parse("2026-11-28T10:58:00Z").toEpochMilli();

    @Test
    void inlinedWritesEachValueWhereItsPlaceholderWas() {
        Sql sql = new Sql()
                .add("SELECT ")
                .bigint(-7)
                .add(", ")
                .numeric(new BigDecimal("1E-3"))
                .add(" WHERE t >= ")
                .timestamp(T)
                .add(" AND t = ANY (")
                .timestamps(List.of(T, T + 60_000))
                .add(") AND r = ANY (")
                .bigints(List.of(1L, 2L))
                .add(") AND n IS NOT DISTINCT FROM ")
                .nullableBigint(null)
                .add(" AND x = '?'");
        assertThat(sql.inlined())
                .isEqualTo("SELECT (-7)::bigint, (0.001)::numeric WHERE t >= '2026-11-28T10:58:00Z'::timestamptz"
                        + " AND t = ANY ('{2026-11-28T10:58:00Z,2026-11-28T10:59:00Z}'::timestamptz[]) AND r = ANY"
                        + " ('{1,2}'::bigint[]) AND n IS NOT DISTINCT FROM NULL::bigint AND x = '?'");
    }

    @Test
    void inlinedRefusesText() {
        Sql sql = new Sql().add("SELECT ").text("'; DROP TABLE x; --");
        assertThatThrownBy(sql::inlined).isInstanceOf(IllegalStateException.class);
    }
}

package dev.recount.db.tables;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.Objects;

/**
 * {@code serving_settings} (V12): the one row of settings the read side needs. Its {@code time_zone} is the setting
 * {@code time-zone}, in which {@code daily_metrics} (and hours of zones with fractional offsets) cut periods; the
 * reconciler records it at every applied run, so the database's days are the reconciler's.
 */
public final class ServingSettingsTable {
    public static final String TABLE = "serving_settings";

    private ServingSettingsTable() {}

    /**
     * Records {@code zone} as {@code time_zone}, in the name PostgreSQL reads the same way ({@link #postgresName}),
     * and checks that PostgreSQL's rules give the same UTC offset as Java's at each of {@code probes} (else the
     * caller's transaction must not commit: days would be cut elsewhere than the reconciler cuts them).
     *
     * @throws IllegalStateException if PostgreSQL does not know the zone or its offsets differ from Java's
     */
    public static void recordTimeZone(Connection conn, ZoneId zone, Instant... probes) throws SQLException {
        Objects.requireNonNull(zone, "zone");
        String name = postgresName(zone);
        try (PreparedStatement ps = conn.prepareStatement("UPDATE " + TABLE + " SET time_zone = ?")) {
            ps.setString(1, name);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "PostgreSQL does not know the time zone '" + name + "' (setting time-zone = " + zone.getId() + "): "
                            + e.getMessage(),
                    e);
        }
        for (Instant probe : probes) {
            try (PreparedStatement ps = conn.prepareStatement("SELECT extract(epoch FROM (?::timestamptz AT TIME ZONE"
                    + " time_zone) - (?::timestamptz AT TIME ZONE 'UTC'))::int FROM " + TABLE)) {
                ps.setTimestamp(1, Timestamp.from(probe));
                ps.setTimestamp(2, Timestamp.from(probe));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    int postgres = rs.getInt(1);
                    int java = zone.getRules().getOffset(probe).getTotalSeconds();
                    if (postgres != java) {
                        throw new IllegalStateException(
                                "time zone " + zone.getId() + " is UTC" + ZoneOffset.ofTotalSeconds(java)
                                        + " at " + probe + " for Java but UTC" + ZoneOffset.ofTotalSeconds(postgres)
                                        + " for PostgreSQL (different time zone data?): update one of them");
                    }
                }
            }
        }
    }

    /** The recorded time zone, as PostgreSQL reads it. */
    public static String timeZone(Connection conn) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT time_zone FROM " + TABLE);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }

    /**
     * The name PostgreSQL gives the same meaning: region ids as they are (Europe/Berlin); a fixed offset as a POSIX
     * zone, because PostgreSQL reads a bare "+01:00" (or "GMT+1") the POSIX way, as one hour WEST of Greenwich.
     */
    public static String postgresName(ZoneId zone) {
        ZoneId z = zone.normalized();
        if (!(z instanceof ZoneOffset offset)) return z.getId();
        int seconds = offset.getTotalSeconds();
        if (seconds == 0) return "UTC";
        int west = -seconds, abs = Math.abs(west);
        String name = offset.getId().replace(":", "");
        return String.format(
                Locale.ROOT, "<%s>%s%02d:%02d:%02d", name, west < 0 ? "-" : "+", abs / 3600, abs / 60 % 60, abs % 60);
    }
}

package dev.recount.bench;

import dev.recount.core.config.RecountConfig;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import dev.recount.db.Logins;
import dev.recount.db.Migrations;
import dev.recount.db.sets.SetTables;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Set-up steps of bench/run.sh: {@code schema NAME [DEFINITIONS]} (fresh schema + migrations, and the objects of the
 * metric sets of a definitions file as {@code ./recount migrate} creates them, + component logins), {@code topics
 * PARTITIONS T...}, {@code count TABLE} (rows and summed events), {@code set-rows SCHEMA [DEFINITIONS]} (the same for
 * every set's stream table).
 */
public final class Admin {
    /**
     * A connection as the stack's administrator ({@code RECOUNT_JDBC_URL}, {@code PGUSER}, {@code PGPASSWORD}, as
     * {@code .recount/local.env} sets them) with {@code schema} first on the search path.
     */
    static Connection connectTo(String schema) throws SQLException {
        Connection c = DriverManager.getConnection(
                System.getenv("RECOUNT_JDBC_URL"),
                System.getenv("PGUSER"),
                System.getenv().getOrDefault("PGPASSWORD", ""));
        try (Statement s = c.createStatement()) {
            s.execute("SET search_path TO " + schema);
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** The definitions file {@code args[at]} names, with the documented settings; the built-in ones without. */
    private static MetricSets definitions(String[] args, int at) throws IOException {
        if (args.length <= at) return MetricSets.defaults();
        return MetricSets.parse(Files.readString(Path.of(args[at])), args[at], RecountConfig.defaults());
    }

    public static void main(String[] args) throws Exception {
        String url = System.getenv("RECOUNT_JDBC_URL");
        String user = System.getenv("PGUSER");
        String password = System.getenv().getOrDefault("PGPASSWORD", "");
        switch (args[0]) {
            case "schema" -> {
                try (Connection c = DriverManager.getConnection(url, user, password);
                        Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA IF EXISTS " + args[1] + " CASCADE");
                    s.execute("CREATE SCHEMA " + args[1]);
                }
                Migrations.apply(url, user, password, args[1], definitions(args, 2));
                // The stream job logs in as the schema's own login, as `./recount stream` does; its password goes
                // where local.env's RECOUNT_PGPASSWORD_DIR points.
                try (Connection c = DriverManager.getConnection(url, user, password)) {
                    Logins.ensureLocal(c, args[1], Path.of(System.getenv("RECOUNT_PGPASSWORD_DIR")));
                }
            }
            case "topics" -> {
                int partitions = Integer.parseInt(args[1]);
                List<NewTopic> topics = new ArrayList<>();
                for (int i = 2; i < args.length; i++) topics.add(new NewTopic(args[i], partitions, (short) 1));
                try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, System.getenv("KAFKA_BOOTSTRAP_SERVERS")))) {
                    admin.createTopics(topics).all().get();
                }
            }
            case "count" -> {
                try (Connection c = DriverManager.getConnection(url, user, password);
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT count(*), coalesce(sum(events), 0) FROM " + args[1])) {
                    rs.next();
                    System.out.println(rs.getLong(1) + " rows / " + rs.getLong(2) + " events");
                }
            }
            case "set-rows" -> {
                // Per metric set of a definitions file (the built-in ones without): its stream table's rows and
                // events, one line each.
                try (Connection c = DriverManager.getConnection(url, user, password);
                        Statement s = c.createStatement()) {
                    for (MetricSet set : definitions(args, 2).sets()) {
                        String table = args[1] + "." + new SetTables(set).streamWindowMetrics();
                        try (ResultSet rs = s.executeQuery("SELECT count(*), coalesce(sum(events), 0) FROM " + table)) {
                            rs.next();
                            System.out.println(
                                    set.name() + " " + rs.getLong(1) + " rows / " + rs.getLong(2) + " events");
                        }
                    }
                }
            }
            default -> throw new IllegalArgumentException("unknown step " + args[0]);
        }
    }
}

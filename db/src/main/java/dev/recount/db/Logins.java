package dev.recount.db;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.postgresql.PGConnection;

/**
 * LOGIN roles for the components of one schema, each a member (INHERIT) of the schema's group role ({@link Role}).
 * Creating them needs CREATEROLE: {@code ./recount up} does it for the local stack, the tests for their schemas; on a
 * cluster it is the DBA's (the same statements are in docs/operations.md, "Database logins").
 */
public final class Logins {
    private static final String ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    private Logins() {}

    /**
     * Makes {@code login} a LOGIN role with {@code password} and no other attribute (not a superuser, cannot
     * create roles or databases, no replication, no RLS bypass), a member of {@code groupRole} that inherits its
     * privileges. Creates it if missing; otherwise resets its attributes and password, so a rerun converges. The
     * password is sent as a SCRAM verifier computed here, so the server log can never show it.
     */
    public static void ensure(Connection admin, String login, String password, String groupRole) throws SQLException {
        boolean exists;
        try (PreparedStatement ps = admin.prepareStatement("SELECT 1 FROM pg_roles WHERE rolname = ?")) {
            ps.setString(1, login);
            try (ResultSet rs = ps.executeQuery()) {
                exists = rs.next();
            }
        }
        String attributes = " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOREPLICATION NOBYPASSRLS";
        execute(admin, (exists ? "ALTER ROLE " : "CREATE ROLE ") + quoted(admin, login) + attributes);
        admin.unwrap(PGConnection.class).alterUserPassword(login, password.toCharArray(), "scram-sha-256");
        // PostgreSQL 16+: INHERIT is an option of the grant itself; earlier versions take it from the login above.
        String grant = "GRANT " + quoted(admin, groupRole) + " TO " + quoted(admin, login);
        if (admin.getMetaData().getDatabaseMajorVersion() >= 16) grant += " WITH INHERIT TRUE";
        execute(admin, grant);
    }

    /**
     * The local convenience ({@code ./recount up}, the demo, the tests): one login per {@link Role} of
     * {@code schema}, named {@link Role#loginName}, its password in {@code passwordDir/<login>.password}
     * (owner-only; generated at the first call, then reused, so a rerun keeps every consumer's password valid).
     *
     * @return each role's login name
     */
    public static Map<Role, String> ensureLocal(Connection admin, String schema, Path passwordDir) throws SQLException {
        Map<Role, String> logins = new EnumMap<>(Role.class);
        for (Role role : Role.values()) {
            String login = role.loginName(schema);
            ensure(admin, login, localPassword(passwordDir, login), role.roleName(schema));
            logins.put(role, login);
        }
        return logins;
    }

    /** Where {@link #ensureLocal} keeps {@code login}'s password (what {@code postgres.password-dir} points at). */
    public static Path passwordFile(Path passwordDir, String login) {
        return passwordDir.resolve(login + ".password");
    }

    /** 24 letters and digits from a SecureRandom, without look-alikes (0/O, 1/l/I): about 140 bits. */
    public static String generatePassword() {
        StringBuilder pw = new StringBuilder();
        for (int i = 0; i < 24; i++) pw.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        return pw.toString();
    }

    private static String localPassword(Path dir, String login) {
        Path file = passwordFile(dir, login);
        try {
            if (Files.isRegularFile(file)) {
                List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                if (!lines.isEmpty() && !lines.get(0).isBlank())
                    return lines.get(0).strip();
            }
            ownerOnlyDirectory(dir);
            String password = generatePassword();
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, password + "\n", StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            return password;
        } catch (IOException e) {
            throw new IllegalStateException("cannot keep the password of login " + login + " in " + file + ": " + e, e);
        }
    }

    private static void ownerOnlyDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir.getParent());
            try {
                Files.createDirectory(
                        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // created concurrently: fine, its mode is set below
            }
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    }

    private static String quoted(Connection c, String identifier) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT quote_ident(?)")) {
            ps.setString(1, identifier);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}

package dev.recount.faults;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a process listens on, read from /proc: the cluster round checks that nothing of the clusters is reachable beyond
 * loopback. (testkit has the same reader for the tests; the suite's main code uses no test support.)
 */
final class ListeningSockets {
    private static final Pattern SOCKET = Pattern.compile("socket:\\[(\\d+)]");

    private ListeningSockets() {}

    /**
     * The local addresses of the TCP sockets {@code pid} listens on, as {@code ip:port}: its socket inodes (from
     * /proc/pid/fd) matched against the LISTEN rows of /proc/pid/net/tcp and tcp6. An IPv4-mapped IPv6 address (how
     * Java binds 127.0.0.1 on a dual-stack socket) is shown as the IPv4 address.
     */
    static List<String> of(long pid) throws IOException {
        Set<String> inodes = new HashSet<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    Matcher m = SOCKET.matcher(Files.readSymbolicLink(fd).toString());
                    if (m.matches()) inodes.add(m.group(1));
                } catch (IOException e) {
                    // the descriptor closed meanwhile
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (String table : List.of("tcp", "tcp6")) {
            List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "net", table));
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                if (f[3].equals("0A") && inodes.contains(f[9])) out.add(decode(f[1]));
            }
        }
        return out;
    }

    /** /proc/net/tcp{,6} addresses: hex, each 32-bit word in host (little-endian) order, then :port in hex. */
    static String decode(String hexAddress) {
        String[] parts = hexAddress.split(":");
        byte[] bytes = new byte[parts[0].length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = word * 8 + (3 - i) * 2;
                bytes[word * 4 + i] = (byte) Integer.parseInt(parts[0].substring(at, at + 2), 16);
            }
        }
        int port = Integer.parseInt(parts[1], 16);
        try {
            String ip = InetAddress.getByAddress(bytes).getHostAddress(); // maps ::ffff:a.b.c.d to a.b.c.d
            return ip + ":" + port;
        } catch (IOException e) {
            throw new IllegalStateException("bad address " + hexAddress, e);
        }
    }
}

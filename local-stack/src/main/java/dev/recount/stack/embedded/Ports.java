package dev.recount.stack.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** Loopback port checks. Everything the local stack runs binds 127.0.0.1 only. */
public final class Ports {
    public static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private Ports() {}

    /** Whether a server could bind {@code port} on 127.0.0.1 now. */
    public static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(LOOPBACK, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether something accepts connections on 127.0.0.1:{@code port}. */
    public static boolean isOpen(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(LOOPBACK, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The port a service should use: {@code requested} when it is not 0 (and free), else {@code previous} when that
     * is free (so local.env stays the same across restarts), else one the kernel picks; never one of {@code avoid}.
     *
     * @param what names the service and the setting in the error message, e.g. "Kafka port (local.kafka-port)"
     */
    public static int choose(int requested, int previous, String what, int... avoid) {
        if (requested < 0 || requested > 65535) {
            throw new StackException(what + " must be between 0 and 65535, got " + requested);
        }
        if (requested != 0) {
            if (contains(avoid, requested)) {
                throw new StackException(
                        what + " " + requested + " is the port of another service of the stack; choose another port");
            }
            if (!isFree(requested)) {
                throw new StackException(what + " " + requested
                        + " is in use on 127.0.0.1; choose another port, or 0 to pick a free one");
            }
            return requested;
        }
        if (previous > 0 && !contains(avoid, previous) && isFree(previous)) return previous;
        for (int attempt = 0; attempt < 20; attempt++) {
            int port = pickFree();
            if (!contains(avoid, port)) return port;
        }
        throw new StackException("cannot find a free port for the " + what);
    }

    static int pickFree() {
        try (ServerSocket socket = new ServerSocket(0, 1, LOOPBACK)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new StackException("cannot open a loopback socket to find a free port: " + e.getMessage(), e);
        }
    }

    private static boolean contains(int[] values, int v) {
        for (int x : values) if (x == v) return true;
        return false;
    }
}

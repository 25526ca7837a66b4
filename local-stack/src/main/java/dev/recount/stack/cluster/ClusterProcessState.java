package dev.recount.stack.cluster;

import java.util.OptionalLong;

/** One framework process of the local clusters, as {@code status} shows it. */
public record ClusterProcessState(String name, boolean running, long pid, OptionalLong stalePid) {}

package dev.recount.oracle;

import java.util.List;

/** A row's key: its window's start (epoch milliseconds) and its dimension values in the set's order. */
public record Key(long windowStart, List<String> dimensions) implements Comparable<Key> {
    public Key {
        dimensions = List.copyOf(dimensions);
    }

    public static Key of(long windowStart, String... dimensions) {
        return new Key(windowStart, List.of(dimensions));
    }

    /** By window start, then dimension by dimension. */
    @Override
    public int compareTo(Key o) {
        int c = Long.compare(windowStart, o.windowStart);
        for (int i = 0; c == 0 && i < dimensions.size(); i++)
            c = dimensions.get(i).compareTo(o.dimensions.get(i));
        return c;
    }
}

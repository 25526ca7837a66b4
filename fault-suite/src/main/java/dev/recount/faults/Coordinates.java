package dev.recount.faults;

import java.util.Comparator;

/** Where a Kafka record is: the identity the judge compares records by (a lake row, a dead letter name their input's). */
record Coordinates(String topic, int partition, long offset) implements Comparable<Coordinates> {
    private static final Comparator<Coordinates> ORDER = Comparator.comparing(Coordinates::topic)
            .thenComparingInt(Coordinates::partition)
            .thenComparingLong(Coordinates::offset);

    @Override
    public int compareTo(Coordinates o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        return topic + "/" + partition + "/" + offset;
    }
}

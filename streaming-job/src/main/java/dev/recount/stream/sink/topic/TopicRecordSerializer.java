package dev.recount.stream.sink.topic;

import java.io.Serializable;

/** Turns an element into the record published for it. Part of the job graph, so it must be serializable. */
@FunctionalInterface
public interface TopicRecordSerializer<T> extends Serializable {
    TopicRecord serialize(T element);
}

package dev.recount.stream.sets;

import dev.recount.core.config.EventTimeSettings;
import dev.recount.core.sets.MetricSet;
import dev.recount.core.sets.MetricSets;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The metric sets one run of the job computes, each with its event-time rules ({@link SetRules}), in the definitions
 * file's order. Every operator of the job is built from the same instance, so a set's position is the same in all of
 * them within a run; across runs sets are known by name only (the file may gain or lose sets between two starts).
 */
public final class JobSets implements Serializable {
    private static final long serialVersionUID = 1L;

    private final List<SetRules> sets;
    private final Map<String, Integer> positions = new HashMap<>();
    /** By {@link SetKeys#prefix}: how the windows' keys name the set without a copy of the name per record. */
    private final Map<String, SetRules> byPrefix = new HashMap<>();

    private final SetRules defaultSet;

    public JobSets(List<SetRules> sets) {
        this.sets = List.copyOf(sets);
        if (this.sets.isEmpty()) throw new IllegalArgumentException("the job computes at least one metric set");
        SetRules found = null;
        for (int i = 0; i < this.sets.size(); i++) {
            SetRules s = this.sets.get(i);
            if (positions.put(s.name(), i) != null) {
                throw new IllegalArgumentException("metric set " + s.name() + " is given twice");
            }
            if (s.set().isDefault()) found = s;
            else byPrefix.put(SetKeys.prefix(s.name()), s);
        }
        this.defaultSet = found;
    }

    /** Every set of {@code definitions}, each with windows of its own size and the allowed lateness of {@code time}. */
    public static JobSets of(MetricSets definitions, EventTimeSettings time) {
        Objects.requireNonNull(definitions, "definitions");
        Objects.requireNonNull(time, "time");
        List<SetRules> rules = new ArrayList<>();
        for (MetricSet s : definitions.sets()) rules.add(new SetRules(s, time.eventTime(s.window())));
        return new JobSets(rules);
    }

    public List<SetRules> all() {
        return sets;
    }

    public int size() {
        return sets.size();
    }

    public SetRules get(int position) {
        return sets.get(position);
    }

    /** The set named {@code name}; null when this run does not compute it (removed from the definitions). */
    public SetRules byName(String name) {
        Integer i = positions.get(name);
        return i == null ? null : sets.get(i);
    }

    /** The position of the set named {@code name} in this run; -1 when it computes no such set. */
    public int position(String name) {
        Integer i = positions.get(name);
        return i == null ? -1 : i;
    }

    /** The default set, or null when the definitions do not keep it. */
    public SetRules defaultSet() {
        return defaultSet;
    }

    /** The set a window key's first string names ({@link SetKeys}); null when this run does not compute it. */
    public SetRules ofKeyPart(String first) {
        return SetKeys.isDefault(first) ? defaultSet : byPrefix.get(first);
    }

    /** The sets with attribution on, in file order. */
    public List<SetRules> withAttribution() {
        return sets.stream().filter(s -> s.set().attribution()).toList();
    }

    /** The longest window of any set: the de-dup horizon must cover it. */
    public Duration longestWindow() {
        return sets.stream().map(s -> s.set().window()).max(Duration::compareTo).orElseThrow();
    }

    public List<String> names() {
        return sets.stream().map(SetRules::name).toList();
    }

    @Override
    public String toString() {
        return "JobSets" + names();
    }
}

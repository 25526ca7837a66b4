package dev.recount.bench;

import dev.recount.stream.StreamJob;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;

/**
 * What one retained checkpoint of the streaming job holds, per operator and, for the window operator, per metric set:
 * the bytes of its state as the checkpoint stores them, and for each set its live window keys (a window start and
 * dimension values: a row to be), the state entries that hold them (one per dimension values) and the bytes per window
 * key. Read from the checkpoint's own files (its {@code _metadata} and the window operator's keyed state), not
 * estimated.
 *
 * <p>The window operator's state is one entry per (set, dimension values) ({@code KeyWindows}, keyed as the job's
 * {@code SetKeys} keys it: a first part starting with NUL names a set other than the default). The job runs on the
 * heap state backend, whose checkpoints write, per key group, the key group's id, then per state its id (a short),
 * the number of entries and every entry as namespace, key and value, each with the serializer the checkpoint's own
 * meta data restores (Flink's {@code HeapSnapshotStrategy}; uncompressed, as the job configures it). An entry's bytes
 * are the three together, which is what a key costs in the checkpoint.
 *
 * <p>Runs on streaming-job's runtime classpath with this jar added. Args: {@code CHECKPOINT_DIR} (a {@code chk-N}
 * directory holding {@code _metadata}). Prints {@code RESULT operator <uid> <bytes>} per operator with state (its uid,
 * or name, with '_' for spaces), {@code RESULT checkpoint <id> <bytes>}, and per set {@code RESULT set <name> <window
 * keys> <state entries> <bytes> <bytes per window key> <bytes per state entry>}.
 */
public final class SetStateSizes {
    /** What the first part of a non-default set's window key starts with (streaming-job's SetKeys). */
    private static final char SET_MARK = '\u0000';

    private SetStateSizes() {}

    /** Per set: the state entries (one per dimension values), the live windows they hold, and their bytes. */
    static final class SetState {
        long keys;
        long windows;
        long bytes;
    }

    public static void main(String[] args) throws Exception {
        Path checkpoint = Path.of(args[0]);
        ClassLoader loader = SetStateSizes.class.getClassLoader();
        CheckpointMetadata metadata;
        try (DataInputStream in = new DataInputStream(Files.newInputStream(checkpoint.resolve("_metadata")))) {
            metadata = Checkpoints.loadCheckpointMetadata(in, loader, checkpoint.toString());
        }
        Map<OperatorID, String> uids = knownUids();
        OperatorID windowOperator = operatorId(StreamJob.WINDOW_UID);
        long total = 0;
        Map<String, SetState> sets = new TreeMap<>();
        for (OperatorState operator : metadata.getOperatorStates()) {
            long bytes = operator.getStateSize();
            total += bytes;
            String uid = operator.getOperatorUid()
                    .filter(u -> !u.isEmpty())
                    .orElseGet(() -> uids.getOrDefault(operator.getOperatorID(), operator.getOperatorID() + ""));
            if (bytes > 0) System.out.printf(Locale.ROOT, "RESULT operator %s %d%n", uid.replace(' ', '_'), bytes);
            if (operator.getOperatorID().equals(windowOperator)) {
                for (OperatorSubtaskState subtask : operator.getStates()) {
                    for (KeyedStateHandle handle : subtask.getManagedKeyedState()) {
                        readWindowState(handle, loader, sets);
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "RESULT checkpoint %d %d%n", metadata.getCheckpointId(), total);
        for (Map.Entry<String, SetState> e : sets.entrySet()) {
            SetState s = e.getValue();
            System.out.printf(
                    Locale.ROOT,
                    "RESULT set %s %d %d %d %.1f %.1f%n",
                    e.getKey(),
                    s.windows,
                    s.keys,
                    s.bytes,
                    s.windows == 0 ? 0.0 : (double) s.bytes / s.windows,
                    s.keys == 0 ? 0.0 : (double) s.bytes / s.keys);
        }
    }

    /** The job's operators by the id Flink derives from each uid (for metadata that does not carry the uid itself). */
    private static Map<OperatorID, String> knownUids() {
        Map<OperatorID, String> ids = new HashMap<>();
        for (String uid : List.of(
                StreamJob.SOURCE,
                StreamJob.VALIDATE,
                StreamJob.DEAD_LETTER_SINK_UID,
                StreamJob.DEDUP_UID,
                StreamJob.LAKE_SINK,
                StreamJob.LAKE_LEDGER,
                StreamJob.WINDOW_UID,
                StreamJob.LATE_AT_WINDOW,
                StreamJob.BACKFILL_SINK_UID,
                StreamJob.WINDOW_METRICS_SINK,
                StreamJob.ATTRIBUTION_JOIN,
                StreamJob.ATTRIBUTION_WINDOWS,
                StreamJob.ATTRIBUTION_SINK)) {
            ids.put(operatorId(uid), uid);
        }
        return ids;
    }

    private static OperatorID operatorId(String uid) {
        return new OperatorID(StreamGraphHasherV2.generateUserSpecifiedHash(uid));
    }

    /** Adds what one subtask's keyed state of the window operator holds to {@code sets}. */
    @SuppressWarnings("unchecked")
    static void readWindowState(KeyedStateHandle handle, ClassLoader loader, Map<String, SetState> sets)
            throws IOException {
        if (!(handle instanceof KeyGroupsStateHandle groups)) {
            throw new IOException(
                    "not a heap backend's full snapshot: " + handle.getClass().getName());
        }
        byte[] bytes;
        try (InputStream in = groups.getDelegateStateHandle().openInputStream()) {
            bytes = in.readAllBytes();
        }
        DataInputDeserializer view = new DataInputDeserializer(bytes);
        KeyedBackendSerializationProxy<Object> proxy = new KeyedBackendSerializationProxy<>(loader);
        proxy.read(view);
        if (proxy.isUsingKeyGroupCompression()) throw new IOException("compressed key groups are not read here");
        TypeSerializer<Object> keys = proxy.getKeySerializerSnapshot().restoreSerializer();
        List<StateMetaInfoSnapshot> states = proxy.getStateMetaInfoSnapshots();
        List<TypeSerializer<Object>> namespaces = new ArrayList<>();
        List<TypeSerializer<Object>> values = new ArrayList<>();
        for (StateMetaInfoSnapshot s : states) {
            TypeSerializer<Object> ns = s.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.KEY_VALUE
                    ? (TypeSerializer<Object>)
                            s.getTypeSerializerSnapshot(StateMetaInfoSnapshot.CommonSerializerKeys.NAMESPACE_SERIALIZER)
                                    .restoreSerializer()
                    : null;
            namespaces.add(ns);
            values.add((TypeSerializer<Object>)
                    s.getTypeSerializerSnapshot(StateMetaInfoSnapshot.CommonSerializerKeys.VALUE_SERIALIZER)
                            .restoreSerializer());
        }
        for (Tuple2<Integer, Long> group : groups.getGroupRangeOffsets()) {
            int offset = Math.toIntExact(group.f1);
            view.setBuffer(bytes, offset, bytes.length - offset); // positions stay the array's
            int id = view.readInt();
            if (id != group.f0) throw new IOException("key group " + group.f0 + " starts with id " + id);
            for (int s = 0; s < states.size(); s++) {
                int state = view.readShort();
                int entries = view.readInt();
                for (int e = 0; e < entries; e++) {
                    if (namespaces.get(state) == null) { // a priority queue (timers): elements only
                        values.get(state).deserialize(view);
                        continue;
                    }
                    int start = view.getPosition();
                    namespaces.get(state).deserialize(view);
                    Tuple2<String, String> key = (Tuple2<String, String>) keys.deserialize(view);
                    int valueStart = view.getPosition();
                    values.get(state).deserialize(view);
                    SetState set = sets.computeIfAbsent(setOf(key), k -> new SetState());
                    set.keys++;
                    set.windows += windowsAt(bytes, valueStart); // KeyWindows' serializers write it first
                    set.bytes += view.getPosition() - start;
                }
            }
        }
    }

    private static String setOf(Tuple2<String, String> key) {
        return key.f0.isEmpty() || key.f0.charAt(0) != SET_MARK ? "default" : key.f0.substring(1);
    }

    private static int windowsAt(byte[] bytes, int at) {
        return ((bytes[at] & 0xFF) << 24)
                | ((bytes[at + 1] & 0xFF) << 16)
                | ((bytes[at + 2] & 0xFF) << 8)
                | (bytes[at + 3] & 0xFF);
    }
}

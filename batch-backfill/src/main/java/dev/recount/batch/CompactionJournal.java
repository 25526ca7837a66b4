package dev.recount.batch;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The record of one hour's swap, written before the swap starts: which staged files become which visible files,
 * and which small files they replace. Its existence is the commit point. Without it, staged files are leftovers
 * of a run that died before deciding anything, and are dropped; with it, the swap is finished by whoever finds it
 * next ({@link #finish}) — the next compaction of that day, or a backfill about to read the hour.
 *
 * <p>Stored as {@code <lake>/_recount/compaction/<hour id>.<generation>.journal}.
 *
 * @param hour       the hour's id ({@link LakeHour#id()})
 * @param generation unique per compaction of the hour; part of the compacted files' names
 * @param outputs    staged file (relative to the lake root) → name in the hour directory
 * @param inputs     names of the small files in the hour directory that the outputs replace
 * @param rows       rows in the inputs, and so in the outputs
 */
record CompactionJournal(String hour, String generation, List<Output> outputs, List<String> inputs, long rows) {
    private static final Logger LOG = LoggerFactory.getLogger(CompactionJournal.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String DIRECTORY = "compaction";
    static final String SUFFIX = ".journal";

    record Output(String staged, String published) {}

    CompactionJournal {
        outputs = List.copyOf(outputs);
        inputs = List.copyOf(inputs);
    }

    Path path(LakeStorage lake) {
        return new Path(lake.controlDirectory(DIRECTORY), hour + "." + generation + SUFFIX);
    }

    /** Makes the swap decided: from here on the outputs replace the inputs, even if this process dies now. */
    void write(LakeStorage lake) throws IOException {
        lake.writeAtomically(path(lake), JSON.writeValueAsBytes(this));
    }

    /**
     * Publishes every output not yet published (rename into the hour directory), then deletes the inputs still
     * there, then the journal. Each step is idempotent, so an interrupted finish is finished by the next one.
     * Inputs are only deleted once every output is in place: if an output is neither staged nor published (a lake
     * edited by hand), nothing is deleted and the error says which file is missing.
     */
    void finish(LakeStorage lake) throws IOException {
        Path hourDir = lake.hourDirectory(lakeHour());
        for (Output o : outputs) {
            Path staged = new Path(lake.base(), o.staged());
            Path published = new Path(hourDir, o.published());
            if (lake.fs().exists(published)) continue;
            if (!lake.fs().exists(staged)) {
                throw new IOException("compaction journal " + path(lake) + ": " + o.published()
                        + " is neither staged nor published; the small files it replaces are kept");
            }
            if (!lake.fs().rename(staged, published)) {
                throw new IOException("cannot publish " + staged + " as " + published);
            }
        }
        // On a local lake a host crash may keep a later step of these and lose an earlier one unless each is synced:
        // the inputs must not go before the outputs are in place, nor the journal before the inputs are gone (the
        // next run would then see both and every row twice).
        lake.syncDirectory(hourDir);
        for (String name : inputs) {
            lake.fs().delete(new Path(hourDir, name), false);
        }
        lake.syncDirectory(hourDir);
        lake.fs().delete(path(lake), false);
    }

    /** The hour's directory from its id. */
    private LakeHour lakeHour() {
        return new LakeHour(java.time.LocalDate.parse(hour.substring(0, 10)), Integer.parseInt(hour.substring(11)));
    }

    /** Every journal left by a compaction of {@code date} that did not finish, read back. */
    static List<CompactionJournal> unfinished(LakeStorage lake, java.time.LocalDate date) throws IOException {
        List<CompactionJournal> journals = new ArrayList<>();
        for (FileStatus s : lake.listOrEmpty(lake.controlDirectory(DIRECTORY))) {
            String name = s.getPath().getName();
            if (!name.startsWith(date.toString()) || !name.endsWith(SUFFIX)) continue;
            journals.add(JSON.readValue(lake.readIfExists(s.getPath()).orElseThrow(), CompactionJournal.class));
        }
        return journals;
    }

    /**
     * Deletes the journals of {@code date}'s hours that a killed run left undecided: written to their temporary names
     * but never renamed into place (the run's staged files go with its staging directory). The caller holds the day's
     * lock. Returns how many.
     */
    static int dropUndecided(LakeStorage lake, java.time.LocalDate date) throws IOException {
        int dropped = 0;
        for (FileStatus s : lake.listOrEmpty(lake.controlDirectory(DIRECTORY))) {
            boolean undecided = LakeStorage.nameOfTemporary(s.getPath().getName())
                    .filter(journal -> journal.startsWith(date.toString()) && journal.endsWith(SUFFIX))
                    .isPresent();
            if (undecided && lake.fs().delete(s.getPath(), false)) dropped++;
        }
        return dropped;
    }

    /** Finishes every interrupted swap of {@code date}'s hours. The caller holds the day's lock. */
    static int finishInterrupted(LakeStorage lake, java.time.LocalDate date) throws IOException {
        List<CompactionJournal> journals = unfinished(lake, date);
        for (CompactionJournal j : journals) {
            LOG.warn(
                    "finishing the interrupted compaction of {} (generation {}): publishing {} files, removing {}"
                            + " files they replace",
                    j.hour(),
                    j.generation(),
                    j.outputs().size(),
                    j.inputs().size());
            j.finish(lake);
        }
        return journals.size();
    }
}

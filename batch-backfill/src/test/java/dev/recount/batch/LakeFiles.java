package dev.recount.batch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** What the compaction tests look at in a local lake: an hour's visible files, and recount's bookkeeping files. */
final class LakeFiles {
    private LakeFiles() {}

    /** The directory of the hour starting at {@code hourStart}. */
    static Path hourDirectory(Path lake, long hourStart) {
        return lake.resolve(LakeHour.containing(hourStart).relativePath());
    }

    /** The names of the hour's data files, as Spark sees them (no hidden ones), sorted. */
    static List<String> visible(Path lake, long hourStart) throws IOException {
        try (Stream<Path> s = Files.list(hourDirectory(lake, hourStart))) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> !LakeStorage.isHidden(n))
                    .sorted()
                    .toList();
        }
    }

    /** Every file under the directories for compaction journals and staged files, hidden ones included. */
    static List<Path> bookkeeping(Path lake) throws IOException {
        List<Path> left = new ArrayList<>();
        for (String sub : List.of("_recount/compaction", "_recount/staging")) {
            Path d = lake.resolve(sub);
            if (!Files.exists(d)) continue;
            try (Stream<Path> s = Files.walk(d)) {
                s.filter(Files::isRegularFile).forEach(left::add);
            }
        }
        return left;
    }
}

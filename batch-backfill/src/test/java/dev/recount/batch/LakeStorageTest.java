package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The temporary names of the lake's control files, and telling them back from any other name in the directory. */
class LakeStorageTest {
    @Test
    void aTemporaryNameLeadsBackToItsFileAndNoOtherNameDoes() {
        String journal = "2026-11-28T10.20261129T010000-deadbeef.journal";
        assertThat(LakeStorage.nameOfTemporary(LakeStorage.temporaryName(journal)))
                .contains(journal);

        for (String other : new String[] {".tmp", "..tmp", ".x", "x.tmp", journal, "", "."}) {
            assertThat(LakeStorage.nameOfTemporary(other)).as(other).isEmpty();
        }
    }
}

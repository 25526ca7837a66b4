package dev.recount.core.lake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.recount.core.lake.LakeColumns.Column;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The lake's one column list keeps the rules that let every file ever written stay readable. */
class LakeColumnsTest {

    @Test
    void nullableColumnsComeLastSoOlderFilesAreAPrefix() {
        int firstNullable = names().indexOf(LakeLayout.REQUEST_ID);
        List<Column> after = LakeColumns.ALL.subList(firstNullable, LakeColumns.ALL.size());
        assertThat(after).allMatch(Column::nullable);
        assertThat(LakeColumns.ALL.subList(0, firstNullable)).noneMatch(Column::nullable);
    }

    @Test
    void theHivePartitionColumnsAreDirectoriesNotFileColumns() {
        assertThat(names()).doesNotContain(LakeLayout.DATE_PARTITION, LakeLayout.HOUR_PARTITION);
    }

    @Test
    void findsColumnsByNameAndRefusesUnknownOnes() {
        assertThat(LakeColumns.named(LakeLayout.KAFKA_PARTITION).type()).isEqualTo(LakeColumns.Type.INT32);
        assertThat(LakeColumns.indexOf(LakeLayout.EVENT_ID)).isZero();
        assertThatThrownBy(() -> LakeColumns.named("nope")).hasMessageContaining("no lake column named nope");
        assertThatThrownBy(() -> new Column(" ", LakeColumns.Type.STRING, false))
                .hasMessageContaining("name");
    }

    private static List<String> names() {
        return LakeColumns.ALL.stream().map(Column::name).toList();
    }
}

package dev.recount.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DataSizesTest {
    @Test
    void readsBytesAndBinarySuffixes() {
        assertThat(DataSizes.parse("k", "1048576")).isEqualTo(1L << 20);
        assertThat(DataSizes.parse("k", "512k")).isEqualTo(512L << 10);
        assertThat(DataSizes.parse("k", "256m")).isEqualTo(256L << 20);
        assertThat(DataSizes.parse("k", " 1G ")).isEqualTo(1L << 30);
        assertThat(DataSizes.parse("k", "128MB")).isEqualTo(128L << 20);
    }

    @Test
    void refusesWhatItCannotReadNamingTheSetting() {
        assertThatThrownBy(() -> DataSizes.parse("lake.compaction.target-file-size", "1.5g"))
                .hasMessage("setting lake.compaction.target-file-size: cannot read size '1.5g'; expected bytes or e.g."
                        + " 512k, 256m, 1g");
        assertThatThrownBy(() -> DataSizes.parse("x", "")).hasMessageContaining("cannot read size ''");
        assertThatThrownBy(() -> DataSizes.parse("x", "99999999999999999g")).hasMessageContaining("too large");
    }
}

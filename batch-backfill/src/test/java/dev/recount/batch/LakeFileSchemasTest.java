package dev.recount.batch;

import static org.apache.parquet.schema.LogicalTypeAnnotation.stringType;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;
import org.junit.jupiter.api.Test;

class LakeFileSchemasTest {
    private static final MessageType V1 = Types.buildMessage()
            .required(BINARY)
            .as(stringType())
            .named("event_id")
            .required(INT64)
            .named("event_ts")
            .named("raw_event");
    private static final MessageType V2 = Types.buildMessage()
            .required(BINARY)
            .as(stringType())
            .named("event_id")
            .required(INT64)
            .named("event_ts")
            .optional(BINARY)
            .as(stringType())
            .named("request_id")
            .named("raw_event");

    @Test
    void identicalSchemasComeBackUnchanged() {
        assertThat(LakeFileSchemas.merge(List.of(V1, V1))).isSameAs(V1);
    }

    @Test
    void aColumnAddedLaterIsKeptAndOptional() {
        MessageType merged = LakeFileSchemas.merge(List.of(V1, V2));
        assertThat(merged).isEqualTo(V2);
        MessageType requiredAdded = Types.buildMessage()
                .required(BINARY)
                .as(stringType())
                .named("event_id")
                .required(INT64)
                .named("event_ts")
                .required(BINARY)
                .as(stringType())
                .named("request_id")
                .named("raw_event");
        MessageType m = LakeFileSchemas.merge(List.of(requiredAdded, V1));
        assertThat(m.getType("request_id").getRepetition()).isEqualTo(Repetition.OPTIONAL);
        assertThat(m.getType("event_id").getRepetition()).isEqualTo(Repetition.REQUIRED);
        assertThat(m.getType("request_id").getLogicalTypeAnnotation()).isEqualTo(stringType());
    }

    @Test
    void aColumnWithAnotherTypeIsRefused() {
        MessageType tsAsString = Types.buildMessage()
                .required(BINARY)
                .as(stringType())
                .named("event_id")
                .required(BINARY)
                .as(stringType())
                .named("event_ts")
                .named("raw_event");
        assertThatThrownBy(() -> LakeFileSchemas.merge(List.of(V1, tsAsString)))
                .hasMessageStartingWith("files disagree on column event_ts");
    }
}

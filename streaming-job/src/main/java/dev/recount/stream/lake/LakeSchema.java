package dev.recount.stream.lake;

import static org.apache.parquet.schema.LogicalTypeAnnotation.stringType;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT32;
import static org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.INT64;

import dev.recount.core.lake.LakeColumns;
import java.util.List;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;

/**
 * The raw event lake's Parquet schema, derived from core's {@link LakeColumns} (the one definition, which the batch
 * layer reads by): strings are UTF-8 {@code binary (STRING)}, INT32/INT64 plain {@code int32}/{@code int64}, a
 * nullable column {@code optional}, every other one {@code required}.
 */
public final class LakeSchema {
    public static final MessageType SCHEMA = of(LakeColumns.ALL);

    private LakeSchema() {}

    /** The Parquet message of {@code columns}, in their order. */
    static MessageType of(List<LakeColumns.Column> columns) {
        Types.MessageTypeBuilder message = Types.buildMessage();
        for (LakeColumns.Column c : columns) {
            Repetition repetition = c.nullable() ? Repetition.OPTIONAL : Repetition.REQUIRED;
            switch (c.type()) {
                case STRING ->
                    message.primitive(BINARY, repetition).as(stringType()).named(c.name());
                case INT32 -> message.primitive(INT32, repetition).named(c.name());
                case INT64 -> message.primitive(INT64, repetition).named(c.name());
            }
        }
        return message.named(LakeColumns.RECORD_NAME);
    }
}

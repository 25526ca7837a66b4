package dev.recount.batch;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;

/**
 * One Parquet schema for files that may come from different versions of the stream job (a column added later,
 * such as an optional {@code request_id}). Compaction writes whatever columns the files have; nothing here
 * names the lake's columns.
 */
final class LakeFileSchemas {
    private LakeFileSchemas() {}

    /**
     * Every column of every schema, in the order of first appearance. Identical schemas give that schema back
     * unchanged (the usual case: required stays required). A column some files lack becomes optional (those rows
     * read as null, as any reader of the mixed files already sees them), and so does one that is required in some
     * files and optional in others.
     *
     * @throws IllegalArgumentException when two files disagree on a column's type
     */
    static MessageType merge(List<MessageType> schemas) {
        if (schemas.isEmpty()) throw new IllegalArgumentException("schemas must not be empty");
        MessageType first = schemas.get(0);
        if (schemas.stream().allMatch(first::equals)) return first;
        Map<String, Type> merged = new LinkedHashMap<>();
        Map<String, Integer> seenIn = new LinkedHashMap<>();
        for (MessageType schema : schemas) {
            for (Type field : schema.getFields()) {
                seenIn.merge(field.getName(), 1, Integer::sum);
                Type known = merged.get(field.getName());
                merged.put(field.getName(), known == null ? field : combine(known, field));
            }
        }
        List<Type> fields = new ArrayList<>();
        merged.forEach((name, field) -> {
            boolean inEveryFile = seenIn.get(name) == schemas.size();
            fields.add(!inEveryFile && field.getRepetition() == Repetition.REQUIRED ? optional(field) : field);
        });
        return new MessageType(first.getName(), fields);
    }

    private static Type combine(Type a, Type b) {
        if (a.equals(b)) return a;
        if (a.isPrimitive() && b.isPrimitive()) {
            PrimitiveType pa = a.asPrimitiveType();
            PrimitiveType pb = b.asPrimitiveType();
            boolean sameType = pa.getPrimitiveTypeName() == pb.getPrimitiveTypeName()
                    && pa.getTypeLength() == pb.getTypeLength()
                    && Objects.equals(pa.getLogicalTypeAnnotation(), pb.getLogicalTypeAnnotation());
            boolean neitherRepeated =
                    a.getRepetition() != Repetition.REPEATED && b.getRepetition() != Repetition.REPEATED;
            if (sameType && neitherRepeated) return optional(a);
        }
        throw new IllegalArgumentException("files disagree on column " + a.getName() + ": " + a + " vs " + b);
    }

    private static Type optional(Type field) {
        if (field.getRepetition() == Repetition.OPTIONAL) return field;
        if (!field.isPrimitive()) {
            throw new IllegalArgumentException("column " + field.getName() + " is missing from some files and is a"
                    + " required group; cannot make it optional");
        }
        PrimitiveType p = field.asPrimitiveType();
        Types.PrimitiveBuilder<PrimitiveType> b =
                Types.primitive(p.getPrimitiveTypeName(), Repetition.OPTIONAL).as(p.getLogicalTypeAnnotation());
        if (p.getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY)
            b = b.length(p.getTypeLength());
        if (p.getId() != null) b = b.id(p.getId().intValue());
        return b.named(p.getName());
    }
}

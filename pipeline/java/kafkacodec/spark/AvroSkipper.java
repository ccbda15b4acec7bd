package kafkacodec.spark;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.io.parsing.ResolvingGrammarGenerator;
import org.apache.avro.util.internal.Accessor;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;

/** Passing over a writer's field the reader's schema lacks (its bytes are read, nothing is appended), and
 *  the reader's defaults for the fields the writer lacks, encoded once. */
final class AvroSkipper {
    static final int MAX_DEPTH = 200;  // levels a skipped value may nest (a writer's schema may hold itself)

    private AvroSkipper() {}

    static AvroAppender of(Schema writer) {
        return of(writer, new IdentityHashMap<>());
    }

    private static AvroAppender of(Schema w, Map<Schema, AvroAppender> seen) {
        AvroAppender known = seen.get(w);
        if (known != null) {
            return known;
        }
        switch (w.getType()) {
            case NULL: return new Bytes(0);
            case BOOLEAN: return new Bytes(1);
            case FLOAT: return new Bytes(4);
            case DOUBLE: return new Bytes(8);
            case FIXED: return new Bytes(w.getFixedSize());
            case INT: case LONG: case ENUM: return new Varint();
            case STRING: case BYTES: return new Span();
            case ARRAY: return new AvroAppender.Items(null, of(w.getElementType(), seen));
            case MAP: return new AvroAppender.Items(new Span(), of(w.getValueType(), seen));
            case UNION: {
                List<Schema> types = w.getTypes();
                AvroAppender[] branches = new AvroAppender[types.size()];
                AvroAppender union = new AvroAppender.WriterUnion(branches);
                seen.put(w, union);
                for (int i = 0; i < branches.length; i++) {
                    branches[i] = of(types.get(i), seen);
                }
                return union;
            }
            case RECORD: {
                AvroAppender[] fields = new AvroAppender[w.getFields().size()];
                Record record = new Record(fields);
                seen.put(w, record);  // before its fields, which may hold it
                for (Schema.Field f : w.getFields()) {
                    fields[f.pos()] = of(f.schema(), seen);
                }
                return record;
            }
            default: throw new IllegalArgumentException("no Avro type " + w.getType());
        }
    }

    /** A reader's field's default in Avro's binary encoding of its schema, as Avro's resolving decoder
     *  encodes it: JSON's code points 0-255 as bytes, a union's default as its first branch, a record's
     *  missing fields from their own defaults. */
    static byte[] encodedDefault(Schema.Field field) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        try {
            ResolvingGrammarGenerator.encode(encoder, field.schema(), Accessor.defaultValue(field));
            encoder.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static final class Bytes extends AvroAppender {
        private final int n;

        Bytes(int n) {
            this.n = n;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            in.skip(n);
        }

        @Override
        boolean empty() {
            return n == 0;
        }
    }

    private static final class Varint extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            in.readLong();
        }
    }

    private static final class Span extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            in.readSpan();
        }
    }

    private static final class Record extends AvroAppender {
        private final AvroAppender[] fields;
        private Boolean empty;  // worked out once (null while it is: a record that holds itself takes bytes)

        Record(AvroAppender[] fields) {
            this.fields = fields;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            if (++in.depth > MAX_DEPTH) {
                throw new AvroRuntimeException("a value nests deeper than " + MAX_DEPTH + " records");
            }
            for (AvroAppender f : fields) {
                f.read(in, v);
            }
            in.depth--;
        }

        @Override
        boolean empty() {
            if (empty == null) {
                empty = false;
                boolean all = true;
                for (AvroAppender f : fields) {
                    all &= f.empty();
                }
                empty = all;
            }
            return empty;
        }
    }
}

package kafkacodec.spark;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import kafkacodec.generated.LegacyLogEntry;
import kafkacodec.generated.RecordBatch;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/** Rows appended column by column into Spark's column vectors: the columns a query needs, in its order. */
final class ColumnSink {
    private static final long EARLIEST_MS = -62_135_596_800_000L, LATEST_MS = 253_402_300_799_999L;  // years 1-9999
    private static final long NO_TIMESTAMP = -1;
    private static final byte[][] CODEC_NAMES = {utf8("none"), utf8("gzip"), utf8("snappy"), utf8("lz4"), utf8("zstd")};
    private static final byte[] UNKNOWN_CODEC = utf8("?");
    private static final java.util.Set<String> SLICE_CONSTANTS = java.util.Set.of("topic", "partition", "segment");

    private final String[] names;
    private final OnHeapColumnVector[] vectors;
    private final ColumnarBatch batch;
    private final byte[] topic, segment;
    private final int partition;
    private final Typed[] typed;  // the typed key and value columns the query reads
    private final Set<String> typedNames = new HashSet<>();  // the three columns of each typed key or value
    private int rows;
    private long bytes;

    /** A typed column's decoder and its three vectors, null where the query does not read one. */
    private static final class Typed {
        final AvroColumn column;
        final WritableColumnVector decoded, ids, errors;

        Typed(AvroColumn column, WritableColumnVector decoded, WritableColumnVector ids, WritableColumnVector errors) {
            this.column = column;
            this.decoded = decoded;
            this.ids = ids;
            this.errors = errors;
        }
    }

    ColumnSink(StructType schema, Slice slice, ReadSettings settings) {
        names = schema.fieldNames();
        vectors = OnHeapColumnVector.allocateColumns(ReadSettings.ROWS_PER_BATCH, schema);
        topic = utf8(slice.topic);
        segment = utf8(slice.segment);
        partition = slice.partition;
        // the slice's topic, partition and segment: one value for every row, set once (no bytes per row)
        ColumnVector[] columns = new ColumnVector[names.length];
        for (int c = 0; c < names.length; c++) {
            columns[c] = vectors[c];
            if (SLICE_CONSTANTS.contains(names[c])) {
                ConstantColumnVector constant = new ConstantColumnVector(1, schema.fields()[c].dataType());
                if (names[c].equals("partition")) {
                    constant.setInt(partition);
                } else {
                    constant.setUtf8String(UTF8String.fromBytes(names[c].equals("topic") ? topic : segment));
                }
                columns[c] = constant;
            }
        }
        batch = new ColumnarBatch(columns);
        java.util.List<Typed> reading = new java.util.ArrayList<>();
        for (AvroColumn column : settings.typed) {
            typedNames.addAll(Set.of(column.field + "Decoded", column.field + "SchemaId", column.field + "Error"));
            WritableColumnVector decoded = vector(column.field + "Decoded"), ids = vector(column.field + "SchemaId"),
                errors = vector(column.field + "Error");
            if (decoded != null || ids != null || errors != null) {
                column.prepare();
                reading.add(new Typed(column, decoded, ids, errors));
            }
        }
        typed = reading.toArray(new Typed[0]);
    }

    private WritableColumnVector vector(String name) {
        for (int c = 0; c < names.length; c++) {
            if (names[c].equals(name)) {
                return vectors[c];
            }
        }
        return null;
    }

    private boolean isTyped(String name) {
        return typedNames.contains(name);
    }

    boolean wants(String name) {
        for (String n : names) {
            if (n.equals(name)) {
                return true;
            }
        }
        return false;
    }

    int rows() {
        return rows;
    }

    /** What a decoded key or value may still take: a batch of Kafka's is appended whole, so its values
     *  together are bounded here, not only each (a few bytes can declare millions of items). */
    private long room() {
        return Math.max(0, ReadSettings.MAX_DECODED_BYTES - bytes);
    }

    boolean full() {
        return rows >= ReadSettings.ROWS_PER_BATCH || bytes >= ReadSettings.BYTES_PER_BATCH;
    }

    void reset() {
        for (OnHeapColumnVector v : vectors) {
            v.reset();
        }
        rows = 0;
        bytes = 0;
    }

    ColumnarBatch batch() {
        batch.setNumRows(rows);
        return batch;
    }

    void close() {
        batch.close();
    }

    /** The records of `b` with offsets in [lo, hi). */
    void records(RecordBatch b, RecordBatch.Record[] items, long lo, long hi, long position, boolean crcValid) {
        int[] kept = new int[items.length];
        int n = 0;
        for (int i = 0; i < items.length; i++) {
            if (items[i].offset >= lo && items[i].offset < hi) {
                kept[n++] = i;
            }
        }
        for (int c = 0; c < names.length; c++) {
            WritableColumnVector v = vectors[c];
            switch (names[c]) {
                case "key":
                    for (int k = 0; k < n; k++) {
                        RecordBatch.Record r = items[kept[k]];
                        bytes += binary(v, r._io, r._key_at, r._key_len);
                    }
                    break;
                case "value":
                    for (int k = 0; k < n; k++) {
                        RecordBatch.Record r = items[kept[k]];
                        bytes += binary(v, r._io, r._value_at, r._value_len);
                    }
                    break;
                case "offset":
                    for (int k = 0; k < n; k++) {
                        v.appendLong(items[kept[k]].offset);
                    }
                    break;
                case "timestamp":
                    for (int k = 0; k < n; k++) {
                        timestamp(v, items[kept[k]].timestamp);
                    }
                    break;
                case "sequence":
                    for (int k = 0; k < n; k++) {
                        v.appendInt(sequence(b, items[kept[k]].offset));
                    }
                    break;
                case "headers":
                    for (int k = 0; k < n; k++) {
                        headers(v, items[kept[k]].headers);
                    }
                    break;
                default:
                    if (!isTyped(names[c])) {
                        perBatch(v, names[c], b, n, position, crcValid);
                    }
            }
        }
        for (Typed t : typed) {
            for (int k = 0; k < n; k++) {
                RecordBatch.Record r = items[kept[k]];
                boolean key = t.column.isKey;
                // the headers: one may name the schema, shown or not; what each decoded value takes counts
                // toward the batch's bytes, so a batch stays bounded
                bytes += t.column.append(r._io, key ? r._key_at : r._value_at, key ? r._key_len : r._value_len,
                                         r.headers, t.decoded, t.ids, t.errors, room());
            }
        }
        rows += n;
    }

    /** The records of a legacy entry whose message is `m`, with offsets in [lo, hi). */
    void legacy(LegacyLogEntry.LegacyMessage m, LegacyRecords r, long lo, long hi, long position, boolean crcValid) {
        int n = 0;
        int[] kept = new int[r.offsets.length];
        for (int i = 0; i < r.offsets.length; i++) {
            if (r.offsets[i] >= lo && r.offsets[i] < hi) {
                kept[n++] = i;
            }
        }
        for (int c = 0; c < names.length; c++) {
            WritableColumnVector v = vectors[c];
            for (int k = 0; k < n; k++) {
                int i = kept[k];
                switch (names[c]) {
                    case "key": bytes += binary(v, r.keys[i]); break;
                    case "value": bytes += binary(v, r.values[i]); break;
                    case "offset": v.appendLong(r.offsets[i]); break;
                    case "timestamp": timestamp(v, r.timestamps[i]); break;
                    case "timestampType": v.appendInt(r.timestampTypes[i]); break;
                    case "headers": v.appendNull(); break;
                    case "topic": case "partition": case "segment": break;  // constant vectors
                    case "magic": v.appendInt((int) m.magic); break;
                    case "compression": codec(v, (int) (m.attributes & 7)); break;
                    case "producerId": v.appendLong(-1); break;
                    case "producerEpoch": case "sequence": v.appendInt(-1); break;
                    case "isTransactional": case "isControl": v.appendBoolean(false); break;
                    case "crcValid": v.appendBoolean(crcValid); break;
                    case "position": v.appendLong(position); break;
                    case "corruption": v.appendNull(); break;
                    default:
                        if (!isTyped(names[c])) {
                            throw new IllegalStateException("no column " + names[c]);
                        }
                }
            }
        }
        for (Typed t : typed) {
            for (int k = 0; k < n; k++) {
                byte[] data = t.column.isKey ? r.keys[kept[k]] : r.values[kept[k]];
                bytes += t.column.append(data, data == null ? -1 : 0, data == null ? 0 : data.length, null, t.decoded,
                                         t.ids, t.errors, room());
            }
        }
        rows += n;
    }

    /** `n` records of `b` from offset `first`, one after another, from its header alone. */
    void fromHeader(RecordBatch b, long first, int n, long position, boolean crcValid) {
        for (int c = 0; c < names.length; c++) {
            WritableColumnVector v = vectors[c];
            switch (names[c]) {
                case "offset":
                    for (int k = 0; k < n; k++) {
                        v.appendLong(first + k);
                    }
                    break;
                case "sequence":
                    for (int k = 0; k < n; k++) {
                        v.appendInt(sequence(b, first + k));
                    }
                    break;
                default:
                    perBatch(v, names[c], b, n, position, crcValid);
            }
        }
        rows += n;
    }

    /** A row standing for a batch that could not be read (onCorrupt=report). */
    void corruption(long position, String said) {
        for (int c = 0; c < names.length; c++) {
            WritableColumnVector v = vectors[c];
            switch (names[c]) {
                case "topic": case "partition": case "segment": break;  // constant vectors
                case "crcValid": v.appendBoolean(false); break;
                case "position": v.appendLong(position); break;
                case "corruption":
                    byte[] text = utf8(said);
                    v.appendByteArray(text, 0, text.length);
                    break;
                default: AvroAppender.appendNull(v);  // a struct's fields too, in step
            }
        }
        rows += 1;
    }

    private void perBatch(WritableColumnVector v, String name, RecordBatch b, int n, long position, boolean crcValid) {
        switch (name) {
            case "topic": case "partition": case "segment": break;  // constant vectors
            case "timestampType": v.appendInts(n, (int) ((b.attributes >> 3) & 1)); break;
            case "magic": v.appendInts(n, (int) b.magic); break;
            case "compression":
                for (int k = 0; k < n; k++) {
                    codec(v, (int) (b.attributes & 7));
                }
                break;
            case "producerId": v.appendLongs(n, b.producer_id); break;
            case "producerEpoch": v.appendInts(n, (int) b.producer_epoch); break;
            case "isTransactional": v.appendBooleans(n, ((b.attributes >> 4) & 1) == 1); break;
            case "isControl": v.appendBooleans(n, ((b.attributes >> 5) & 1) == 1); break;
            case "crcValid": v.appendBooleans(n, crcValid); break;
            case "position": v.appendLongs(n, position); break;
            case "corruption": v.appendNulls(n); break;
            default: throw new IllegalStateException("no column " + name);
        }
    }

    /** Kafka's sequence `offset` - base offset after the batch's first, wrapping past 2^31-1 to 0; -1 where
     *  the batch has none. */
    private static int sequence(RecordBatch b, long offset) {
        if (b.base_sequence < 0) {
            return -1;
        }
        long seq = b.base_sequence + (offset - b.base_offset);
        return (int) (seq > Integer.MAX_VALUE ? seq - Integer.MAX_VALUE - 1 : seq);
    }

    /** Milliseconds as Spark's microseconds; null for none (-1) and outside the years Spark holds. */
    private static void timestamp(WritableColumnVector v, long ms) {
        if (ms == NO_TIMESTAMP || ms < EARLIEST_MS || ms > LATEST_MS) {
            v.appendNull();
        } else {
            v.appendLong(ms * 1000);
        }
    }

    private static void codec(WritableColumnVector v, int codec) {
        byte[] name = codec < CODEC_NAMES.length ? CODEC_NAMES[codec] : UNKNOWN_CODEC;
        v.appendByteArray(name, 0, name.length);
    }

    private static int binary(WritableColumnVector v, byte[] value) {
        return value == null ? binary(v, null, -1, 0) : binary(v, value, 0, value.length);
    }

    /** The bytes [at, at + n) of `b`, appended as they lie; null where `at` is -1 (absent). */
    private static int binary(WritableColumnVector v, byte[] b, int at, int n) {
        if (at < 0) {
            v.appendNull();
            return 0;
        }
        v.appendByteArray(b, at, n);
        return n;
    }

    /** A record's headers; null where it has none, as Spark's Kafka source gives them. */
    private void headers(WritableColumnVector v, RecordBatch.Header[] headers) {
        if (headers.length == 0) {
            v.appendNull();
            return;
        }
        v.appendArray(headers.length);
        WritableColumnVector element = v.arrayData();
        for (RecordBatch.Header h : headers) {
            element.appendStruct(false);
            if (ascii(h._io, h._key_at, h._key_len)) {  // as it lies; other text as Java decodes it (Kafka's way)
                element.getChild(0).appendByteArray(h._io, h._key_at, h._key_len);
                bytes += h._key_len;
            } else {
                byte[] key = utf8(h.key());
                element.getChild(0).appendByteArray(key, 0, key.length);
                bytes += key.length;
            }
            bytes += binary(element.getChild(1), h._io, h._value_at, h._value_len);
        }
    }

    private static boolean ascii(byte[] b, int at, int n) {
        for (int i = at; i < at + n; i++) {
            if (b[i] < 0) {
                return false;
            }
        }
        return true;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}

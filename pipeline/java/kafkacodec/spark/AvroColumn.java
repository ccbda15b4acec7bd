package kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.EOFException;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import kafkacodec.generated.RecordBatch;
import org.apache.avro.Resolver;
import org.apache.avro.Schema;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;

/** Keys or values in Confluent's framing (magic byte 0 and a schema id, or 1 and a GUID; or the id in a
 *  `__value_schema_id` header), each read with its writer's Avro schema, resolved to the column's reader
 *  schema, into `<field>Decoded`, `<field>SchemaId` and `<field>Error`, as pipeline/values/columns.py
 *  gives them. The planner hands over the reader schema, the Spark type it maps to, and what each schema
 *  id and GUID the registry holds stands for: a writer's schema (the texts of the schemas it references
 *  first), or the problem the Python source finds with it. */
final class AvroColumn implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final int MAGIC_ID = 0, MAGIC_GUID = 1;
    private static final long NO_ID = Long.MIN_VALUE;  // a record that names no schema id

    final String field;  // key or value
    final boolean isKey;
    private final String header;  // the header a serializer may name the schema in
    private final String[] readerTexts;
    private final Map<Integer, Entry> byId = new HashMap<>();
    private final Map<String, Entry> byGuid = new HashMap<>();

    /** What a schema reference stands for: a writer's schema, or a problem. */
    private static final class Entry implements Serializable {
        private static final long serialVersionUID = 1L;
        final Integer id;
        final String[] texts;  // null where there is a problem
        final String problem;  // "kind: message"
        transient Object steps;  // in a task: its AvroAppender, or the problem Avro's parser finds with it

        Entry(JsonNode e) {
            id = e.get("id").isNull() ? null : e.get("id").asInt();
            texts = e.has("texts") ? strings(e.get("texts")) : null;
            problem = e.has("problem") ? e.get("problem").asText() : null;
        }
    }

    private final DataType type;  // of the decoded column: pipeline/values/avro_types.py's mapping of the reader schema
    private transient Schema reader;
    private transient AvroInput input;
    private transient VectorMarks marks;  // of the last vector decoded into
    private transient OnHeapColumnVector scratch;  // where values go that no column shows
    private transient int lastId;
    private transient Entry lastEntry;  // of lastId

    AvroColumn(JsonNode spec, DataType type) {
        field = spec.get("field").asText();
        isKey = field.equals("key");
        header = field.equals("key") ? "__key_schema_id" : "__value_schema_id";
        readerTexts = strings(spec.get("reader"));
        List<Entry> entries = new ArrayList<>();
        for (JsonNode e : spec.get("schemas")) {
            entries.add(new Entry(e));
        }
        spec.get("refs").fields().forEachRemaining(r -> {
            Entry e = entries.get(r.getValue().asInt());
            if (r.getKey().startsWith("id:")) {
                byId.put(Integer.valueOf(r.getKey().substring(3)), e);
            } else {
                byGuid.put(r.getKey().substring(5), e);
            }
        });
        this.type = type;
        try {
            prepare();  // on the driver, so that a schema Avro's parser refuses fails the read at once
        } catch (RuntimeException e) {  // pipeline/reading.py reads this beginning, and reads with Python
            throw new IllegalArgumentException("the JVM reader cannot decode " + field + "Format=avro: "
                                               + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static String[] strings(JsonNode list) {
        String[] out = new String[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = list.get(i).asText();
        }
        return out;
    }

    private static Schema parsed(String[] texts) {
        Schema.Parser parser = new Schema.Parser();
        Schema last = null;
        for (String text : texts) {  // the referenced schemas first: their names are known after
            last = parser.parse(text);
        }
        return last;
    }

    /** The reader's schema parsed, and the steps that read it (again in each task). */
    void prepare() {
        if (reader == null) {
            reader = parsed(readerTexts);
            AvroAppender.of(Resolver.resolve(reader, reader), type);  // refuses a type that is not the schema's
            input = new AvroInput();
        }
    }

    /** The column's three vectors (null where the query does not read one) given a record's bytes: [at,
     *  at + n) of `b`, null where `at` is -1, taking at most `room` bytes decoded; about how many bytes the
     *  decoded value takes. */
    long append(byte[] b, int at, int n, RecordBatch.Header[] headers, WritableColumnVector decoded,
                WritableColumnVector ids, WritableColumnVector errors, long room) {
        if (at < 0) {  // a null key or value: nothing to decode, and nothing wrong
            undecoded(decoded, ids, NO_ID, errors, null);
            return 0;
        }
        long id = NO_ID;
        try {
            byte[] frame = b;
            int frameAt = at, frameEnd = at + n;
            RecordBatch.Header named = headers == null ? null : named(headers);
            if (named != null) {
                frame = named._io;
                frameAt = named._value_at;
                frameEnd = named._value_at + Math.max(named._value_len, 0);
            }
            Entry entry;
            int bodyAt;
            if (frameEnd <= frameAt) {
                throw new Undecodable("not-framed", framing(named) + " is empty: no magic byte and schema id");
            }
            int magic = frame[frameAt] & 0xFF;
            if (magic == MAGIC_ID) {
                if (frameEnd - frameAt < 5) {
                    throw new Undecodable("truncated", framing(named) + " ends inside its schema id ("
                                          + (frameEnd - frameAt) + " bytes)");
                }
                int framed = (frame[frameAt + 1] & 0xFF) << 24 | (frame[frameAt + 2] & 0xFF) << 16
                             | (frame[frameAt + 3] & 0xFF) << 8 | (frame[frameAt + 4] & 0xFF);
                id = framed;
                if (framed != lastId || lastEntry == null) {  // a run of records of one schema: one lookup
                    lastEntry = byId.get(framed);
                    lastId = framed;
                }
                entry = lastEntry;
                if (entry == null) {
                    throw new Undecodable("unknown-schema", "the schema source holds no schema of id " + framed);
                }
                bodyAt = frameAt + 5;
            } else if (magic == MAGIC_GUID) {
                if (frameEnd - frameAt < 17) {
                    throw new Undecodable("truncated", framing(named) + " ends inside its schema GUID ("
                                          + (frameEnd - frameAt) + " bytes)");
                }
                String guid = guid(frame, frameAt + 1);
                entry = byGuid.get(guid);
                if (entry == null) {
                    throw new Undecodable("unknown-schema", "the schema source holds no schema of GUID " + guid);
                }
                bodyAt = frameAt + 17;
            } else {
                throw new Undecodable("not-framed", framing(named) + " starts with byte " + magic
                                      + ", not a schema registry's magic byte (0 or 1)");
            }
            id = entry.id == null ? NO_ID : entry.id;
            if (entry.problem != null) {
                throw new Undecodable(entry.problem);
            }
            decode(entry, b, named != null ? at : bodyAt, at + n, decoded, room);
        } catch (Undecodable e) {
            undecoded(decoded, ids, id, errors, e.getMessage());
            return n;
        }
        if (ids != null) {
            ids.appendInt((int) id);
        }
        if (errors != null) {
            errors.appendNull();
        }
        return Math.max(n, input.spent());
    }

    /** What carries the framing, as an error names it. */
    private String framing(RecordBatch.Header named) {
        return named != null ? "header " + header : "the " + field;
    }

    /** A row with no decoded value: the id its framing names (NO_ID: none), and why (null: nothing is wrong). */
    private static void undecoded(WritableColumnVector decoded, WritableColumnVector ids, long id,
                                  WritableColumnVector errors, String why) {
        if (decoded != null) {
            decoded.appendStruct(true);
        }
        if (ids != null) {
            if (id == NO_ID) {
                ids.appendNull();
            } else {
                ids.appendInt((int) id);
            }
        }
        if (errors != null) {
            if (why == null) {
                errors.appendNull();
            } else {
                byte[] said = why.getBytes(StandardCharsets.UTF_8);
                errors.appendByteArray(said, 0, said.length);
            }
        }
    }

    /** The last header naming the schema, as Kafka's consumers read headers (the last of a name wins). */
    private RecordBatch.Header named(RecordBatch.Header[] headers) {
        RecordBatch.Header found = null;
        for (RecordBatch.Header h : headers) {
            if (h.key().equals(header)) {
                found = h;
            }
        }
        return found == null || found._value_at < 0 ? null : found;  // a null header names nothing
    }

    private static String guid(byte[] b, int at) {
        long hi = 0, lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = hi << 8 | (b[at + i] & 0xFF);
            lo = lo << 8 | (b[at + 8 + i] & 0xFF);
        }
        return new java.util.UUID(hi, lo).toString();
    }

    /** The payload [at, end) of `b` read with the entry's writer's schema into `decoded`, taking at most
     *  `room` bytes decoded; the vectors as they were when it does not read. */
    private void decode(Entry entry, byte[] b, int at, int end, WritableColumnVector decoded, long room)
            throws Undecodable {
        if (entry.steps == null) {
            entry.steps = stepsOf(entry);
        }
        if (entry.steps instanceof String) {
            throw new Undecodable((String) entry.steps);
        }
        AvroAppender steps = (AvroAppender) entry.steps;
        AvroInput in = input.reset(b, at, end, room);
        if (decoded == null) {  // the value checked all the same, though no column shows it
            if (scratch == null) {
                scratch = new OnHeapColumnVector(1, type);
            }
            scratch.reset();
            decoded = scratch;
        }
        if (marks == null || !marks.of(decoded)) {
            marks = new VectorMarks(decoded);
        }
        marks.mark();
        try {
            steps.read(in, decoded);
            if (in.left() != 0) {
                throw new Undecodable("mismatch", in.left() + " byte" + (in.left() != 1 ? "s" : "")
                                      + " follow the value schema " + entry.id + " reads");
            }
        } catch (Undecodable e) {
            marks.rollBack();
            throw e;
        } catch (EOFException e) {
            marks.rollBack();
            throw new Undecodable("truncated", "the payload ends before schema " + entry.id + " is read");
        } catch (AvroAppender.DoesNotFit e) {
            marks.rollBack();
            throw new Undecodable("mismatch", "the value does not fit the column's type: " + e.getMessage());
        } catch (IOException | RuntimeException e) {  // what Avro meets in bytes that are not the schema's
            marks.rollBack();
            String said = String.valueOf(e.getMessage());
            said = said.length() <= 200 ? said : said.substring(0, 200) + "...";
            throw new Undecodable("mismatch", "the payload does not read as schema " + entry.id + ": "
                                  + e.getClass().getSimpleName() + ": " + said);
        }
    }

    /** The steps that read a writer's values as the reader's schema, as Avro resolves the two; or the
     *  problem, said once for every record of it. */
    private Object stepsOf(Entry entry) {
        try {
            return AvroAppender.of(Resolver.resolve(parsed(entry.texts), reader), type);
        } catch (RuntimeException e) {
            return "bad-schema: schema " + entry.id + " is not an Avro schema Avro's Java parser reads: "
                   + e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /** A key or value that does not decode: its kind and message, as the error column says them. */
    private static final class Undecodable extends Exception {
        Undecodable(String kind, String message) {
            super(kind + ": " + message);
        }

        Undecodable(String said) {
            super(said);
        }
    }
}

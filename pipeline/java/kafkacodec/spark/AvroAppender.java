package kafkacodec.spark;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Resolver;
import org.apache.avro.Schema;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/** One step of reading a writer's value as the column's reader schema, compiled from Avro's resolution of
 *  the two (org.apache.avro.Resolver: fields matched by name, skipped or defaulted, promotions, enum
 *  symbols mapped, union branches matched): it reads the writer's bytes and appends the reader's value to
 *  Spark's column vector of the type pipeline/values/avro_types.py maps the reader schema to. A step
 *  refuses a type that is not its own (the Python source then reads the column). Values go straight into
 *  the vectors, no Avro objects between. */
abstract class AvroAppender {
    // the years 1-9999 that Python's dates and datetimes hold, which the Python source decodes into
    private static final int FIRST_DAY = -719_162, LAST_DAY = 2_932_896;
    private static final long FIRST_MICROS = -62_135_596_800_000_000L, LAST_MICROS = 253_402_300_799_999_999L;
    // items of an array or map that take no bytes (nulls, empty records): past this, ten bytes could ask for
    // millions of rows
    static final long MAX_EMPTY_ITEMS = 1 << 20;

    /** The value at `in` appended to `v`. */
    abstract void read(AvroInput in, WritableColumnVector v) throws IOException;

    /** Whether a value of this step may take no bytes at all. */
    boolean empty() {
        return false;
    }

    /** A value read that the column's type cannot hold: said as the Python source says it. */
    static final class DoesNotFit extends RuntimeException {
        DoesNotFit(String message) {
            super(message);
        }
    }

    static void appendNull(WritableColumnVector v) {
        if (v.dataType() instanceof StructType) {
            v.appendStruct(true);  // its fields too, in step
        } else {
            v.appendNull();
        }
    }

    /** The steps that read a writer's value as `a` resolves it to the reader's schema, into type `t`. */
    static AvroAppender of(Resolver.Action a, DataType t) {
        Schema r = a.reader;
        switch (a.type) {
            case ERROR: return new Fails(a.toString());
            case WRITER_UNION: {
                Resolver.Action[] actions = ((Resolver.WriterUnion) a).actions;
                AvroAppender[] branches = new AvroAppender[actions.length];
                for (int i = 0; i < branches.length; i++) {
                    branches[i] = of(actions[i], t);
                }
                return new WriterUnion(branches);
            }
            case READER_UNION: {
                Resolver.ReaderUnion u = (Resolver.ReaderUnion) a;
                nullable(r);
                return r.getTypes().get(u.firstMatch).getType() == Schema.Type.NULL ? new Null() : of(u.actualAction, t);
            }
            case RECORD: return record((Resolver.RecordAdjust) a, t);
            case ENUM:
                return expect(t instanceof StringType, r, t, new Enum(((Resolver.EnumAdjust) a).adjustments,
                                                                      r.getEnumSymbols()));
            case CONTAINER: {
                Resolver.Action items = ((Resolver.Container) a).elementAction;
                if (r.getType() == Schema.Type.ARRAY && t instanceof ArrayType) {
                    return new Items(null, of(items, ((ArrayType) t).elementType()));
                }
                if (r.getType() == Schema.Type.MAP && t instanceof MapType && ((MapType) t).keyType() instanceof StringType) {
                    return new Items(new Text(), of(items, ((MapType) t).valueType()));
                }
                throw refused(r, t);
            }
            case DO_NOTHING: case PROMOTE: return leaf(a.writer.getType(), r, t);
            default: throw new IllegalArgumentException("no step for Avro's resolution " + a.type);
        }
    }

    /** A value of a primitive or fixed type, read as the writer wrote it (`from`: an int or long may be
     *  read as a long, float or double, and strings and bytes are written alike). */
    private static AvroAppender leaf(Schema.Type from, Schema r, DataType t) {
        String logical = r.getProp("logicalType");
        switch (r.getType()) {
            case NULL: return new Null();
            case BOOLEAN: return expect(t instanceof BooleanType, r, t, new Bool());
            case INT:
                if ("date".equals(logical)) {
                    return expect(t instanceof DateType, r, t, new Date());
                }
                return expect(t instanceof IntegerType, r, t, new Int());
            case LONG:
                if (t instanceof TimestampType || t instanceof TimestampNTZType) {
                    boolean millis = "timestamp-millis".equals(logical) || "local-timestamp-millis".equals(logical);
                    boolean micros = "timestamp-micros".equals(logical) || "local-timestamp-micros".equals(logical);
                    return expect(millis || micros, r, t, new Timestamp(millis ? 1000 : 1));
                }
                return expect(t instanceof LongType, r, t, new Long_());
            case FLOAT: return expect(t instanceof FloatType, r, t, new Float_(from));
            case DOUBLE: return expect(t instanceof DoubleType, r, t, new Double_(from));
            case STRING:
                return expect(t instanceof StringType, r, t, "uuid".equals(logical) ? new Uuid() : new Text());
            case BYTES:
                if (t instanceof DecimalType) {
                    return expect("decimal".equals(logical), r, t, new Decimal((DecimalType) t, -1));
                }
                return expect(t instanceof BinaryType, r, t, new Binary(-1));
            case FIXED:
                if (t instanceof DecimalType) {
                    return expect("decimal".equals(logical), r, t, new Decimal((DecimalType) t, r.getFixedSize()));
                }
                return expect(t instanceof BinaryType, r, t, new Binary(r.getFixedSize()));
            default: throw refused(r, t);
        }
    }

    private static AvroAppender expect(boolean fits, Schema s, DataType t, AvroAppender step) {
        if (!fits) {
            throw refused(s, t);
        }
        return step;
    }

    private static IllegalArgumentException refused(Schema s, DataType t) {
        return new IllegalArgumentException("the Avro type " + s + " is not read into Spark's " + t.simpleString());
    }

    /** A reader's union must be null and one type: the others have no Spark type. */
    private static void nullable(Schema union) {
        int values = 0;
        for (Schema branch : union.getTypes()) {
            values += branch.getType() == Schema.Type.NULL ? 0 : 1;
        }
        if (values != 1) {
            throw new IllegalArgumentException("a union of " + union + " has no Spark type");
        }
    }

    private static AvroAppender record(Resolver.RecordAdjust a, DataType t) {
        Schema r = a.reader;
        if (!(t instanceof StructType) || ((StructType) t).fields().length != r.getFields().size()) {
            throw refused(r, t);
        }
        StructType struct = (StructType) t;
        AvroAppender[] steps = new AvroAppender[a.fieldActions.length];
        int[] positions = new int[steps.length];
        int read = 0;
        for (int i = 0; i < steps.length; i++) {
            Resolver.Action field = a.fieldActions[i];
            if (field.type == Resolver.Action.Type.SKIP) {
                steps[i] = AvroSkipper.of(field.writer);
                positions[i] = -1;
                continue;
            }
            Schema.Field f = a.readerOrder[read++];
            positions[i] = at(struct, f, r, t);
            steps[i] = of(field, struct.fields()[positions[i]].dataType());
        }
        int defaults = a.readerOrder.length - a.firstDefault;
        AvroAppender[] defaulted = new AvroAppender[defaults];
        int[] defaultPositions = new int[defaults];
        byte[][] defaultBytes = new byte[defaults][];
        for (int k = 0; k < defaults; k++) {
            Schema.Field f = a.readerOrder[a.firstDefault + k];
            defaultPositions[k] = at(struct, f, r, t);
            defaulted[k] = of(Resolver.resolve(f.schema(), f.schema()), struct.fields()[defaultPositions[k]].dataType());
            defaultBytes[k] = AvroSkipper.encodedDefault(f);
        }
        return new Record(steps, positions, defaulted, defaultPositions, defaultBytes);
    }

    private static int at(StructType struct, Schema.Field f, Schema r, DataType t) {
        if (!struct.fields()[f.pos()].name().equals(f.name())) {
            throw refused(r, t);
        }
        return f.pos();
    }

    /** Avro's resolution found the writer's value cannot be the reader's: said when a value meets it. */
    private static final class Fails extends AvroAppender {
        private final String why;

        Fails(String why) {
            this.why = why;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) {
            throw new AvroRuntimeException(why);
        }
    }

    /** A union as the writer wrote it: its branch's index, then the branch. */
    static final class WriterUnion extends AvroAppender {
        private final AvroAppender[] branches;

        WriterUnion(AvroAppender[] branches) {
            this.branches = branches;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            int branch = in.readInt();
            if (branch < 0 || branch >= branches.length) {
                throw new AvroRuntimeException("union branch " + branch + " of a union of " + branches.length);
            }
            branches[branch].read(in, v);
        }
    }

    private static final class Null extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) {
            appendNull(v);
        }

        @Override
        boolean empty() {
            return true;
        }
    }

    private static final class Bool extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            v.appendBoolean(in.readBoolean());
        }
    }

    private static final class Int extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            v.appendInt(in.readInt());
        }
    }

    private static final class Date extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            int days = in.readInt();
            if (days < FIRST_DAY || days > LAST_DAY) {
                throw new AvroRuntimeException("date " + days + " days from 1970-01-01 is outside the years 1-9999");
            }
            v.appendInt(days);
        }
    }

    /** A long, or an int the writer wrote where the reader has a long (read alike: both are varints). */
    private static final class Long_ extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            v.appendLong(in.readLong());
        }
    }

    private static final class Timestamp extends AvroAppender {
        private final long micros;

        Timestamp(long micros) {
            this.micros = micros;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            long t = in.readLong();
            if (t < FIRST_MICROS / micros || t > LAST_MICROS / micros) {
                throw new AvroRuntimeException("timestamp " + t + " is outside the years 1-9999");
            }
            v.appendLong(t * micros);
        }
    }

    private static final class Float_ extends AvroAppender {
        private final Schema.Type from;

        Float_(Schema.Type from) {
            this.from = from;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            v.appendFloat(from == Schema.Type.FLOAT ? in.readFloat() : (float) in.readLong());
        }
    }

    private static final class Double_ extends AvroAppender {
        private final Schema.Type from;

        Double_(Schema.Type from) {
            this.from = from;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            double d = from == Schema.Type.DOUBLE ? in.readDouble()
                       : from == Schema.Type.FLOAT ? in.readFloat() : (double) in.readLong();
            v.appendDouble(d);
        }
    }

    private static class Text extends AvroAppender {
        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            int n = in.readSpan();
            int at = in.spanAt(n);
            utf8(in.bytes(), at, n);
            in.spend(n);
            append(v, in.bytes(), at, n);
        }

        void append(WritableColumnVector v, byte[] b, int at, int n) {
            v.appendByteArray(b, at, n);
        }
    }

    /** Strict UTF-8, as Python decodes the strings the Python source gives (ASCII, most text, in one
     *  pass without a branch per byte). */
    static void utf8(byte[] b, int at, int n) {
        int high = 0;
        for (int i = at; i < at + n; i++) {
            high |= b[i];
        }
        if (high < 0) {
            try {
                StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b, at, n));
            } catch (CharacterCodingException e) {
                throw new AvroRuntimeException("a string is not UTF-8: " + e);
            }
        }
    }

    /** A UUID's text as Python's uuid.UUID reads and writes it (braces, a urn:uuid: prefix and dashes
     *  anywhere taken; lower case, dashed, out). */
    private static final class Uuid extends Text {
        @Override
        void append(WritableColumnVector v, byte[] b, int at, int n) {
            String hex = new String(b, at, n, StandardCharsets.UTF_8).replace("urn:", "").replace("uuid:", "");
            int from = 0, to = hex.length();
            while (from < to && (hex.charAt(from) == '{' || hex.charAt(from) == '}')) {
                from++;
            }
            while (to > from && (hex.charAt(to - 1) == '{' || hex.charAt(to - 1) == '}')) {
                to--;
            }
            hex = hex.substring(from, to).replace("-", "");
            if (hex.length() != 32 || !hex.chars().allMatch(c -> c < 128 && Character.digit(c, 16) >= 0)) {
                throw new AvroRuntimeException("badly formed hexadecimal UUID string");
            }
            String h = hex.toLowerCase(Locale.ROOT);
            byte[] out = (h.substring(0, 8) + "-" + h.substring(8, 12) + "-" + h.substring(12, 16) + "-"
                          + h.substring(16, 20) + "-" + h.substring(20)).getBytes(StandardCharsets.US_ASCII);
            v.appendByteArray(out, 0, out.length);
        }
    }

    /** Bytes (`fixed` -1) or a fixed of `fixed` bytes. */
    private static final class Binary extends AvroAppender {
        private final int fixed;

        Binary(int fixed) {
            this.fixed = fixed;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            int n = in.readSpanOrFixed(fixed);
            in.spend(n);
            v.appendByteArray(in.bytes(), in.spanAt(n), n);
        }

        @Override
        boolean empty() {
            return fixed == 0;
        }
    }

    private static final class Decimal extends AvroAppender {
        private final int precision;
        private final BigInteger past;  // 10^precision: the least magnitude with more digits
        private final int fixed;

        Decimal(DecimalType t, int fixed) {
            this.precision = t.precision();
            this.past = BigInteger.TEN.pow(precision);
            this.fixed = fixed;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            int n = in.readSpanOrFixed(fixed);
            BigInteger unscaled = n == 0 ? BigInteger.ZERO : new BigInteger(in.bytes(), in.spanAt(n), n);
            if (unscaled.abs().compareTo(past) >= 0) {
                throw new DoesNotFit("a decimal of more digits than its precision, " + precision);
            }
            if (precision <= org.apache.spark.sql.types.Decimal.MAX_INT_DIGITS()) {
                v.appendInt(unscaled.intValue());
            } else if (precision <= org.apache.spark.sql.types.Decimal.MAX_LONG_DIGITS()) {
                v.appendLong(unscaled.longValue());
            } else {
                byte[] out = unscaled.toByteArray();
                v.appendByteArray(out, 0, out.length);
            }
        }

        @Override
        boolean empty() {
            return fixed == 0;
        }
    }

    /** An enum's symbol in the reader's schema: the writer's index mapped to the reader's (its default
     *  where it has no such symbol; none is an error). */
    private static final class Enum extends AvroAppender {
        private final int[] toReader;
        private final byte[][] symbols;

        Enum(int[] toReader, List<String> names) {
            this.toReader = toReader;
            symbols = new byte[names.size()][];
            for (int i = 0; i < symbols.length; i++) {
                symbols[i] = names.get(i).getBytes(StandardCharsets.UTF_8);
            }
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            int i = in.readInt();
            if (i < 0 || i >= toReader.length) {
                throw new AvroRuntimeException("enum index " + i + " of " + toReader.length + " symbols");
            }
            int r = toReader[i];
            if (r < 0) {
                throw new AvroRuntimeException("the writer's enum symbol " + i + " is not the reader's, which has no default");
            }
            v.appendByteArray(symbols[r], 0, symbols[r].length);
        }
    }

    /** A record: the writer's fields in its order (into the reader's field, or passed over), then the
     *  reader's fields the writer lacks, from their defaults. */
    private static final class Record extends AvroAppender {
        private final AvroAppender[] steps;
        private final int[] positions;  // of each writer's field in the struct; -1: skipped
        private final AvroAppender[] defaulted;
        private final int[] defaultPositions;
        private final byte[][] defaultBytes;  // each default, encoded as the reader's schema reads it
        private final AvroInput defaults = new AvroInput();

        Record(AvroAppender[] steps, int[] positions, AvroAppender[] defaulted, int[] defaultPositions,
               byte[][] defaultBytes) {
            this.steps = steps;
            this.positions = positions;
            this.defaulted = defaulted;
            this.defaultPositions = defaultPositions;
            this.defaultBytes = defaultBytes;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            v.appendStruct(false);
            for (int i = 0; i < steps.length; i++) {
                steps[i].read(in, positions[i] < 0 ? null : (WritableColumnVector) v.getChild(positions[i]));
            }
            for (int k = 0; k < defaulted.length; k++) {
                in.spend(defaultBytes[k].length + 8);  // copied into every value that lacks it
                defaults.reset(defaultBytes[k], 0, defaultBytes[k].length);
                defaulted[k].read(defaults, (WritableColumnVector) v.getChild(defaultPositions[k]));
            }
        }

        @Override
        boolean empty() {
            for (AvroAppender f : steps) {
                if (!f.empty()) {
                    return false;
                }
            }
            return true;
        }
    }

    /** The blocks of an array (`keys` null) or a map until a block of none, each item read into the vectors
     *  (null where it is passed over): how many items. */
    static long blocks(AvroInput in, AvroAppender keys, AvroAppender items, WritableColumnVector keyVector,
                       WritableColumnVector itemVector) throws IOException {
        long total = 0;
        for (long n = in.items(); n != 0; n = in.items()) {
            total += n;
            if (n < 0 || total > Integer.MAX_VALUE) {
                throw new AvroRuntimeException("a block of " + n + " items");
            }
            if (items.empty() && total > MAX_EMPTY_ITEMS) {
                throw new AvroRuntimeException("a block of " + n + " items (more than " + MAX_EMPTY_ITEMS
                                               + " items that take no bytes are not read)");
            }
            if (keyVector != null) {
                in.spend(8 * n);  // an offset, a length or a number each, at least
            }
            for (long k = 0; k < n; k++) {
                if (keys != null) {
                    keys.read(in, keyVector);
                }
                items.read(in, itemVector);
            }
        }
        return total;
    }

    /** An array (keys null) or a map (keys strings): blocks of items until a block of none; passed over
     *  where there is no vector (a writer's field the reader lacks). */
    static final class Items extends AvroAppender {
        private final AvroAppender keys;
        private final AvroAppender items;

        Items(AvroAppender keys, AvroAppender items) {
            this.keys = keys;
            this.items = items;
        }

        @Override
        void read(AvroInput in, WritableColumnVector v) throws IOException {
            if (v == null) {
                blocks(in, keys, items, null, null);
                return;
            }
            WritableColumnVector keyVector = (WritableColumnVector) v.getChild(0);
            WritableColumnVector itemVector = keys == null ? keyVector : (WritableColumnVector) v.getChild(1);
            int start = keyVector.getElementsAppended();
            long total = blocks(in, keys, items, keyVector, itemVector);
            int row = v.getElementsAppended();
            v.reserve(row + 1);
            v.putNotNull(row);
            v.putArray(row, start, (int) total);
            v.addElementsAppended(1);
        }
    }
}

package kafkacodec.spark;

import java.io.EOFException;
import java.io.IOException;
import org.apache.avro.AvroRuntimeException;

/** Avro's binary encoding read from a range of a byte array, every length checked against the bytes left
 *  before anything is read for it: a payload of ten bytes cannot ask for a gigabyte. Reads as fastavro
 *  reads, which the Python data source decodes with: a boolean is any byte other than 0, and a negative
 *  length is a read that cannot be done (the payload is cut short). */
final class AvroInput {
    private byte[] b;
    private int pos, end;
    int depth;  // how deep a value that is being skipped nests (a writer's schema may hold itself)
    // what the value read may still take in Spark's vectors: a few bytes can declare items by the million,
    // and a reader's default is copied into each
    static final long MAX_DECODED_BYTES = 64L << 20;
    private long budget, start;

    /** Reads [at, end) of `bytes` from here on, the value taking at most `room` decoded bytes. */
    AvroInput reset(byte[] bytes, int at, int end, long room) {
        reset(bytes, at, end);
        budget = Math.min(budget, room);
        start = budget;
        return this;
    }

    /** Reads [at, end) of `bytes` from here on. */
    AvroInput reset(byte[] bytes, int at, int end) {
        this.b = bytes;
        this.pos = at;
        this.end = end;
        this.depth = 0;
        this.budget = this.start = MAX_DECODED_BYTES;
        return this;
    }

    /** Counts `n` bytes of decoded value against the value's budget. */
    void spend(long n) {
        budget -= n;
        if (budget < 0) {
            throw new AvroRuntimeException("the value decodes to more than " + start + " bytes, which are not read"
                                           + (start < MAX_DECODED_BYTES ? " (the values before it in its batch took "
                                              + "the rest of what a batch may take)" : ""));
        }
    }

    /** How much of the budget the value read so far took. */
    long spent() {
        return start - budget;
    }

    int left() {
        return end - pos;
    }

    byte[] bytes() {
        return b;
    }

    private void need(long n) throws EOFException {
        if (n > end - pos) {
            throw new EOFException(n + " bytes wanted at byte " + pos + ", " + (end - pos) + " left");
        }
    }

    boolean readBoolean() throws IOException {
        need(1);
        return b[pos++] != 0;
    }

    int readInt() throws IOException {
        long n = readLong();
        if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
            throw new AvroRuntimeException("Invalid int encoding: " + n + " is out of an int's range");
        }
        return (int) n;
    }

    long readLong() throws IOException {
        long raw = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            need(1);
            int k = b[pos++];
            raw |= (long) (k & 0x7F) << shift;
            if (k >= 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw new AvroRuntimeException("Invalid long encoding: more than ten bytes");
    }

    float readFloat() throws IOException {
        need(4);
        int bits = (b[pos] & 0xFF) | (b[pos + 1] & 0xFF) << 8 | (b[pos + 2] & 0xFF) << 16 | (b[pos + 3] & 0xFF) << 24;
        pos += 4;
        return Float.intBitsToFloat(bits);
    }

    double readDouble() throws IOException {
        need(8);
        long bits = 0;
        for (int i = 7; i >= 0; i--) {
            bits = bits << 8 | (b[pos + i] & 0xFF);
        }
        pos += 8;
        return Double.longBitsToDouble(bits);
    }

    /** The next string or bytes where it lies: its length; it starts at `bytes()[spanAt()]`. */
    int readSpan() throws IOException {
        long n = readLong();
        if (n < 0) {
            throw new EOFException("a length of " + n + " at byte " + pos);
        }
        need(n);
        pos += (int) n;
        return (int) n;
    }

    /** The next bytes (`fixed` -1: sized by a length first) or fixed of `fixed` bytes, where it lies: its
     *  length; it starts at `bytes()[spanAt()]`. */
    int readSpanOrFixed(int fixed) throws IOException {
        if (fixed < 0) {
            return readSpan();
        }
        skip(fixed);
        return fixed;
    }

    /** Where the span just read starts. */
    int spanAt(int length) {
        return pos - length;
    }

    /** Passes over `n` bytes (a fixed, a float, a double). */
    void skip(long n) throws IOException {
        if (n < 0) {  // a fixed of a negative size, which Avro's parser takes
            throw new AvroRuntimeException("a size of " + n);
        }
        need(n);
        pos += (int) n;
    }

    /** A block's item count, 0 after the last; a negative count is followed by the block's size in bytes. */
    long items() throws IOException {
        long n = readLong();
        if (n < 0) {
            readLong();
            n = -n;
        }
        return n;
    }
}

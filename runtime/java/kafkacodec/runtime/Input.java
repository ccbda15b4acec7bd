package kafkacodec.runtime;

import java.nio.charset.StandardCharsets;

/** Bytes being read: a position moving up to an end that nested sized fields narrow. */
public final class Input {
    public final byte[] b;
    public int pos;
    public int end;

    public Input(byte[] b) {
        this(b, 0, b.length);
    }

    public Input(byte[] b, int pos, int end) {
        if (pos < 0 || end > b.length || pos > end) {
            throw new IllegalArgumentException("range [" + pos + ", " + end + ") outside " + b.length + " bytes");
        }
        this.b = b;
        this.pos = pos;
        this.end = end;
    }

    /** Throws unless `n` more bytes are there. */
    public void need(long n, String path) throws DecodeException {
        if (n > end - pos) {
            throw new DecodeException("needs " + n + " bytes, " + (end - pos) + " left", pos, path);
        }
    }

    /** A size read from the bytes: at least 0 and within what is left. */
    public int size(long n, String path) throws DecodeException {
        if (n < 0 || n > end - pos) {
            throw new DecodeException("size " + n + " outside the " + (end - pos) + " bytes left", pos, path);
        }
        return (int) n;
    }

    /** A big-endian number of `width` bytes at `at`, sign-extended when `signed`. */
    public long be(int at, int width, boolean signed) {
        long v = 0;
        for (int i = 0; i < width; i++) {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return signed && width < 8 ? (v << (64 - 8 * width)) >> (64 - 8 * width) : v;
    }

    /** The same, little-endian. */
    public long le(int at, int width, boolean signed) {
        long v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return signed && width < 8 ? (v << (64 - 8 * width)) >> (64 - 8 * width) : v;
    }

    /** A base-128 varint of at most `maxBytes` bytes (a 5-byte one keeps its low 32 bits, as
     *  Kafka's readers do), zigzag-decoded when `zigzag`. */
    public long varint(int maxBytes, boolean zigzag, String path) throws DecodeException {
        long v = 0;
        int start = pos;
        for (int used = 0; ; used++) {
            if (used == maxBytes) {
                throw new DecodeException("varint longer than " + maxBytes + " bytes", start, path);
            }
            if (pos >= end) {
                throw new DecodeException("input ends inside a varint", start, path);
            }
            int x = b[pos++] & 0xFF;
            if (used < 10) {
                v |= (long) (x & 0x7F) << (7 * used);
            }
            if (x < 0x80) {
                break;
            }
        }
        if (maxBytes <= 5) {
            v &= 0xFFFFFFFFL;
            return zigzag ? (int) ((v >>> 1) ^ -(v & 1)) : v;
        }
        return zigzag ? (v >>> 1) ^ -(v & 1) : v;
    }

    public byte[] bytes(int n) {
        byte[] out = java.util.Arrays.copyOfRange(b, pos, pos + n);
        pos += n;
        return out;
    }

    public String text(int n) {
        String out = new String(b, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return out;
    }
}

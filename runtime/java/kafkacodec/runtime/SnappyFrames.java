package kafkacodec.runtime;

import java.io.IOException;
import org.xerial.snappy.Snappy;

/** Snappy in snappy-java's (xerial) stream framing, and a raw block where the bytes have no such
 *  header, as Kafka accepts; each block's declared length is checked against the limit first.
 *  Errors name the stream's first byte, as the other codecs' do. */
final class SnappyFrames {
    private SnappyFrames() {}

    private static final byte[] MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    private static final int MAX_CHUNK = 512 * 1024 * 1024;

    static byte[] decode(byte[] b, int from, int to, String path) throws DecodeException {
        if (to == from) {
            throw fault("cannot decompress empty stream", from, path);
        }
        if (to - from < 16 || !magicAt(b, from, to)) {
            byte[] out = new byte[blockLength(b, from, to - from, 0, from, path)];
            block(b, from, to - from, out, 0, from, path);
            return out;
        }
        byte[] out = new byte[framedLength(b, from, to, path)];
        int total = 0;
        int pos = from + 16;
        while (pos < to) {
            if (pos + 4 > to) {
                throw fault("stream ends inside a chunk length", from, path);
            }
            if (magicAt(b, pos, to)) {  // a concatenated stream's header
                pos += 16;
                continue;
            }
            int n = (b[pos] & 0xFF) << 24 | (b[pos + 1] & 0xFF) << 16 | (b[pos + 2] & 0xFF) << 8 | (b[pos + 3] & 0xFF);
            pos += 4;
            if (n < 0 || n > MAX_CHUNK) {
                throw fault("invalid chunk length " + n, from, path);
            }
            if (pos + n > to) {
                throw fault("stream ends inside a chunk", from, path);
            }
            if (total + blockLength(b, pos, n, total, from, path) > out.length) {
                throw fault("a block decompresses to more than its length says", from, path);
            }
            total += block(b, pos, n, out, total, from, path);
            pos += n;
        }
        return total == out.length ? out : java.util.Arrays.copyOf(out, total);
    }

    /** The decompressed length of a framed stream: the sum of its blocks' declared lengths (checked
     *  against the limit), so that the output is allocated once. */
    private static int framedLength(byte[] b, int from, int to, String path) throws DecodeException {
        long total = 0;
        int pos = from + 16;
        while (pos + 4 <= to) {
            if (magicAt(b, pos, to)) {
                pos += 16;
                continue;
            }
            int n = (b[pos] & 0xFF) << 24 | (b[pos + 1] & 0xFF) << 16 | (b[pos + 2] & 0xFF) << 8 | (b[pos + 3] & 0xFF);
            pos += 4;
            if (n < 0 || n > MAX_CHUNK || pos + n > to) {
                break;  // the reading pass names it
            }
            total += blockLength(b, pos, n, (int) Math.min(total, Integer.MAX_VALUE), from, path);
            pos += n;
        }
        return (int) total;
    }

    private static boolean magicAt(byte[] b, int at, int to) {
        if (to - at < MAGIC.length) {
            return false;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (b[at + i] != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    private static int blockLength(byte[] b, int at, int n, int done, int stream, String path) throws DecodeException {
        int length;
        try {
            length = Snappy.uncompressedLength(b, at, n);
        } catch (IOException e) {
            throw fault(String.valueOf(e.getMessage()), stream, path);
        }
        if (length < 0 || (long) done + length > Processors.MAX_DECOMPRESSED_BYTES) {
            throw fault("decompressed size exceeds the limit of " + Processors.MAX_DECOMPRESSED_BYTES + " bytes",
                        stream, path);
        }
        return length;
    }

    private static int block(byte[] b, int at, int n, byte[] out, int outAt, int stream, String path) throws DecodeException {
        try {
            return Snappy.uncompress(b, at, n, out, outAt);
        } catch (IOException e) {
            throw fault(String.valueOf(e.getMessage()), stream, path);
        }
    }

    private static DecodeException fault(String message, int at, String path) {
        return new DecodeException("snappy: " + message, at, path);
    }
}

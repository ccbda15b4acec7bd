package kafkacodec.runtime;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.zip.GZIPInputStream;

/** What a schema's `process:` names, by name: the bytes of a field as its type reads them. Every
 *  decompression is bounded by MAX_DECOMPRESSED_BYTES. Snappy, LZ4 and zstd go through the libraries
 *  Spark ships (snappy-java, lz4-java, zstd-jni), which must be on the class path. */
public final class Processors {
    private Processors() {}

    public static final int MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;
    public static final int MAX_ITEMS = 1 << 20;

    /** Whether the processor leaves the bytes as they are for these arguments: then they are read
     *  where they lie, and positions in errors are the buffer's. */
    public static boolean keeps(String name, long[] args) {
        return name.equals("kafka_compression") && args[0] == 0;
    }

    public static byte[] decode(String name, long[] args, byte[] b, int from, int to, String path)
            throws DecodeException {
        if (!name.equals("kafka_compression")) {
            throw new DecodeException("no processor " + name, from, path);
        }
        int codec = (int) args[0];
        switch (codec) {
            case 0: return java.util.Arrays.copyOfRange(b, from, to);
            case 1: return gunzip(b, from, to, path);
            case 2: return SnappyFrames.decode(b, from, to, path);
            case 3: return Lz4Frames.decode(b, from, to, (int) args[1], path);
            case 4:
                if (args[1] < 2) {
                    throw new DecodeException("zstd is not valid for magic " + args[1], from, path);
                }
                return ZstdFrames.decode(b, from, to, path);
            default: throw new DecodeException("unknown compression codec id " + codec, from, path);
        }
    }

    private static byte[] gunzip(byte[] b, int from, int to, String path) throws DecodeException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(b, from, to - from))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] chunk = new byte[65536];
            int n;
            while ((n = in.read(chunk)) > 0) {
                if (out.size() + n > MAX_DECOMPRESSED_BYTES) {
                    throw new DecodeException("decompresses to more than " + MAX_DECOMPRESSED_BYTES + " bytes",
                                              from, path);
                }
                out.write(chunk, 0, n);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new DecodeException("gzip: " + e.getMessage(), from, path);
        }
    }
}

package kafkacodec.runtime;

import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;

/** Checksums by the names schemas give them in their `-checksum` key. */
public final class Checksums {
    private Checksums() {}

    public static long of(String algorithm, byte[] b, int from, int to) {
        Checksum c;
        switch (algorithm) {
            case "crc32": c = new CRC32(); break;
            case "crc32c": c = new CRC32C(); break;
            default: throw new IllegalArgumentException("unknown checksum " + algorithm);
        }
        c.update(b, from, to - from);
        return c.getValue();
    }
}

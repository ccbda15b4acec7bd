package kafkacodec.runtime;

import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/** Kafka's LZ4 frames (independent blocks), with lz4-java's block decompressor. Magic 0 writers hashed
 *  the frame's magic into the header checksum by mistake, so for magic 0 it is not checked, as Kafka
 *  does; block checksums are checked where flagged, the content checksum is not (nor by Kafka). */
final class Lz4Frames {
    private Lz4Frames() {}

    private static final LZ4SafeDecompressor BLOCKS = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash32 XXHASH = XXHashFactory.fastestInstance().hash32();
    private static final int MAGIC = 0x184D2204;
    private static final int SCRATCH_KEPT = 4 << 20;
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[256 << 10]);

    static byte[] decode(byte[] b, int from, int to, int magic, String path) throws DecodeException {
        int n = to - from;
        if (n < 7 || le32(b, from) != MAGIC) {
            throw fault("stream unsupported (invalid magic bytes)", from, path);
        }
        int flg = b[from + 4] & 0xFF, bd = b[from + 5] & 0xFF;
        if (flg >> 6 != 1) {
            throw fault("unsupported frame version", from, path);
        }
        if ((flg & 0x03) != 0 || (bd & 0x8F) != 0) {
            throw fault("reserved bits set in the frame descriptor", from, path);
        }
        if ((flg & 0x20) == 0) {
            throw fault("dependent block stream is unsupported", from, path);
        }
        int code = (bd >> 4) & 0x07;
        if (code < 4) {
            throw fault("unsupported block size code " + code, from, path);
        }
        int maxBlock = 1 << (2 * code + 8);
        boolean blockChecksum = (flg & 0x10) != 0;
        int pos = from + 6 + ((flg & 0x08) != 0 ? 8 : 0);
        if (pos >= to) {
            throw fault("stream ended prematurely", from, path);
        }
        if (magic != 0 && (b[pos] & 0xFF) != ((XXHASH.hash(b, from + 4, pos - from - 4, 0) >> 8) & 0xFF)) {
            throw fault("stream frame descriptor corrupted", from, path);
        }
        pos++;
        try {
            return blocks(b, from, to, pos, maxBlock, blockChecksum, path);
        } finally {
            if (SCRATCH.get().length > SCRATCH_KEPT) {
                SCRATCH.remove();  // a large batch's scratch (or a bomb's, refused) is not held on to
            }
        }
    }

    private static byte[] blocks(byte[] b, int from, int to, int pos, int maxBlock, boolean blockChecksum,
                                 String path) throws DecodeException {
        byte[] out = SCRATCH.get();  // blocks land here, then the whole is copied out once, at its size
        int total = 0;
        while (true) {
            if (pos + 4 > to) {
                throw fault("stream ended prematurely", from, path);
            }
            int size = le32(b, pos);
            pos += 4;
            if (size == 0) {
                break;
            }
            boolean stored = (size & 0x80000000) != 0;
            size &= 0x7FFFFFFF;
            if (size > maxBlock) {
                throw fault("block size " + size + " exceeded max: " + maxBlock, from, path);
            }
            if (pos + size > to || (blockChecksum && pos + size + 4 > to)) {
                throw fault("stream ended prematurely", from, path);
            }
            if (blockChecksum && le32(b, pos + size) != XXHASH.hash(b, pos, size, 0)) {
                throw fault("block checksum mismatch", from, path);
            }
            if (total + maxBlock > out.length) {
                if (total + Math.min(size, maxBlock) > Processors.MAX_DECOMPRESSED_BYTES) {
                    throw fault("decompressed size exceeds the limit of " + Processors.MAX_DECOMPRESSED_BYTES
                                + " bytes", from, path);
                }
                out = java.util.Arrays.copyOf(out, (int) Math.min((long) out.length * 2 + maxBlock,
                                                                 Processors.MAX_DECOMPRESSED_BYTES + (long) maxBlock));
                SCRATCH.set(out);
            }
            if (stored) {
                System.arraycopy(b, pos, out, total, size);
                total += size;
            } else {
                try {
                    total += BLOCKS.decompress(b, pos, size, out, total, maxBlock);
                } catch (LZ4Exception e) {
                    throw fault(String.valueOf(e.getMessage()), from, path);
                }
            }
            if (total > Processors.MAX_DECOMPRESSED_BYTES) {
                throw fault("decompressed size exceeds the limit of " + Processors.MAX_DECOMPRESSED_BYTES + " bytes",
                            from, path);
            }
            pos += size + (blockChecksum ? 4 : 0);
        }
        return java.util.Arrays.copyOf(out, total);
    }

    private static int le32(byte[] b, int at) {
        return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8 | (b[at + 2] & 0xFF) << 16 | (b[at + 3] & 0xFF) << 24;
    }

    private static DecodeException fault(String message, int at, String path) {
        return new DecodeException("lz4: " + message, at, path);
    }
}

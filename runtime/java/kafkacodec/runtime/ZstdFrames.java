package kafkacodec.runtime;

import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStream;
import com.github.luben.zstd.Zstd;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/** Zstandard: a single frame that declares its size (as producers write them) in one call within the
 *  limit; anything else (no declared size, several frames, damage) streamed, bounded by the limit. */
final class ZstdFrames {
    private ZstdFrames() {}

    static byte[] decode(byte[] b, int from, int to, String path) throws DecodeException {
        if (to == from) {
            throw new DecodeException("zstd: empty stream", from, path);
        }
        long size = Zstd.getFrameContentSize(b, from, to - from);
        if (size >= 0 && size <= Processors.MAX_DECOMPRESSED_BYTES) {
            byte[] out = new byte[(int) size];
            try {
                long got = Zstd.decompressByteArray(out, 0, out.length, b, from, to - from);
                if (got == size) {
                    return out;
                }
            } catch (ZstdException e) {
                // more than one frame, or damage: the stream below reads them, or names it
            }
        }
        try (ZstdInputStream in = new ZstdInputStream(new ByteArrayInputStream(b, from, to - from))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] chunk = new byte[65536];
            int n;
            while ((n = in.read(chunk)) > 0) {
                if (out.size() + n > Processors.MAX_DECOMPRESSED_BYTES) {
                    throw new DecodeException("zstd: decompressed size exceeds the limit of "
                                              + Processors.MAX_DECOMPRESSED_BYTES + " bytes", from, path);
                }
                out.write(chunk, 0, n);
            }
            return out.toByteArray();
        } catch (IOException | ZstdException e) {
            throw new DecodeException("zstd: " + e.getMessage(), from, path);
        }
    }
}

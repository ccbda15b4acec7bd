package kafkacodec.spark;

import java.io.IOException;
import java.net.URI;
import kafkacodec.generated.LegacyLogEntry;
import kafkacodec.generated.RecordBatch;
import kafkacodec.runtime.Checksums;
import kafkacodec.runtime.DecodeException;
import kafkacodec.runtime.Processors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** The records of one slice in columnar batches, as pipeline/decode.py gives them (v2 batches and legacy
 *  entries, compressed wrappers expanded): offset bounds, control
 *  batches left out unless asked for, aborted transactions left out under read_committed, and a damaged
 *  batch failed, skipped or reported. The file is read in windows of whole batches. */
final class SliceReader implements PartitionReader<ColumnarBatch> {
    private static final int LOG_OVERHEAD = 12;           // offset and size
    private static final int MIN_RECORD_OVERHEAD = 14;    // the smallest legacy message
    private static final int MAGIC_AT = 16;

    private final Slice slice;
    private final ReadSettings settings;
    private final ColumnSink out;
    private final boolean headersEnough;  // no column needs the records themselves
    private final FSDataInputStream file;
    private final long end;
    private long pos;
    private boolean done;
    private byte[] window = new byte[0];
    private long windowAt;  // the file position of window[0]
    private final int windowBytes;
    private int windowLength;

    SliceReader(Slice slice, StructType schema, ReadSettings settings, Configuration hadoop) throws IOException {
        this.slice = slice;
        this.settings = settings;
        this.out = new ColumnSink(schema, slice, settings);
        boolean enough = true;
        for (String name : schema.fieldNames()) {
            enough &= settings.fromBatchHeader.contains(name);
        }
        headersEnough = enough;
        Path path = new Path(URI.create(slice.uri));  // percent-encoded by the planner
        FileSystem fs = path.getFileSystem(hadoop);
        if (fs instanceof LocalFileSystem) {
            // Kafka's files have no Hadoop .crc beside them: the raw reads skip that layer, and a window
            // that stays in the cache is copied out of the kernel's buffer faster than a large one
            fs = ((LocalFileSystem) fs).getRaw();
            windowBytes = ReadSettings.LOCAL_WINDOW_BYTES;
        } else {
            windowBytes = ReadSettings.WINDOW_BYTES;  // fewer, larger requests to object stores
        }
        long length = fs.getFileStatus(path).getLen();
        end = slice.end < 0 ? length : Math.min(slice.end, length);
        pos = slice.start;
        file = fs.open(path);
    }

    @Override
    public boolean next() throws IOException {
        out.reset();
        while (!done && !out.full()) {
            step();
        }
        return out.rows() > 0;
    }

    @Override
    public ColumnarBatch get() {
        return out.batch();
    }

    @Override
    public void close() throws IOException {
        out.close();
        file.close();
    }

    /** Reads the batch at `pos` into the sink, or finds the read done. */
    private void step() throws IOException {
        if (pos >= end) {
            done = true;
            return;
        }
        long at = pos;
        long left = end - at;
        if (left < LOG_OVERHEAD) {
            damaged(left + " bytes left, too few for a batch's offset and size", at, "log", at);
            done = true;  // the framing is lost: nothing after it can be found, as in recovery
            return;
        }
        load(at, LOG_OVERHEAD);
        int size = int32(at + 8);
        if (size < MIN_RECORD_OVERHEAD) {
            damaged("found record size " + size + " smaller than minimum record overhead (" + MIN_RECORD_OVERHEAD + ")",
                    at + 8, "log/size", at);
            done = true;
            return;
        }
        if (LOG_OVERHEAD + (long) size > left) {
            damaged("batch of " + (LOG_OVERHEAD + (long) size) + " bytes extends past the end of the file (" + left
                    + " bytes left)", at, "log", at);
            done = true;
            return;
        }
        pos = at + LOG_OVERHEAD + size;
        load(at, MAGIC_AT + 1);  // (size >= MIN_RECORD_OVERHEAD: the magic byte is inside the batch)
        boolean legacy = (window[(int) (at - windowAt) + MAGIC_AT] & 0xFF) < 2;  // unsigned, as in Python
        if (legacy && tooLarge(at, size)) {  // refused before its bytes are read
            return;
        }
        load(at, LOG_OVERHEAD + size);
        int from = (int) (at - windowAt);
        if (legacy) {
            legacy(at, from, size);
            return;
        }
        RecordBatch batch;
        try {
            batch = RecordBatch.read(window, from, from + LOG_OVERHEAD + size, settings.verifyCrc);
        } catch (DecodeException e) {
            damaged(e.reason, windowAt + e.position, e.path, at);
            return;
        }
        long base = batch.base_offset, last = base + batch.last_offset_delta;
        if (last < slice.lo) {
            return;
        }
        if (base >= slice.hi) {
            done = true;
            return;
        }
        boolean control = ((batch.attributes >> 5) & 1) == 1, transactional = ((batch.attributes >> 4) & 1) == 1;
        if (control ? !settings.includeControl
                    : settings.readCommitted && transactional && slice.isAborted(batch.producer_id, base)) {
            return;
        }
        if ((base < slice.lo || last >= slice.hi) && tooLarge(at, size)) {  // read record by record there
            return;
        }
        boolean crcValid = settings.verifyCrc || !out.wants("crcValid")
            || Checksums.of("crc32c", window, from + 21, from + LOG_OVERHEAD + size) == batch._crc;
        // from the header alone where its offsets follow one another (the cleaner's batches leave gaps), its
        // count is one the records' reader would take and its codec one it knows (else it is refused there)
        if (headersEnough && batch._records_count == batch.last_offset_delta + 1 && batch._records_count >= 0
                && batch._records_count <= Processors.MAX_ITEMS && (batch.attributes & 7) <= 4) {
            long first = Math.max(slice.lo, base), through = Math.min(slice.hi - 1, last);
            out.fromHeader(batch, first, (int) (through - first + 1), at, crcValid);
            return;
        }
        RecordBatch.Record[] items;
        try {
            items = batch.records(settings.verifyCrc).items;
        } catch (DecodeException e) {
            damaged(e.reason, windowAt + e.position, e.path, at);
            return;
        }
        out.records(batch, items, slice.lo, slice.hi, at, crcValid);
    }

    /** Whether the batch at `at` is larger than the Python source reads record by record, said as damage. */
    private boolean tooLarge(long at, int size) throws IOException {
        if (size <= ReadSettings.MAX_BATCH_BYTES) {
            return false;
        }
        damaged("batch of " + size + " bytes is larger than the limit of " + ReadSettings.MAX_BATCH_BYTES
                + " (kafkacodec.runtime.limits.LIMITS.max_batch_bytes)", at + 8, "log/size", at);
        return true;
    }

    /** A legacy entry's records, in the offset bounds. */
    private void legacy(long at, int from, int size) throws IOException {
        LegacyLogEntry entry;
        LegacyRecords records;
        try {
            entry = LegacyLogEntry.read(window, from, from + LOG_OVERHEAD + size, settings.verifyCrc);
            records = LegacyRecords.of(entry, settings.verifyCrc);
        } catch (DecodeException e) {
            damaged(e.reason, e.position < 0 ? at : windowAt + e.position, e.path, at);
            return;
        }
        boolean crcValid = settings.verifyCrc || !out.wants("crcValid")
            || Checksums.of("crc32", window, from + LOG_OVERHEAD + 4, from + LOG_OVERHEAD + size) == entry.message._crc;
        out.legacy(entry.message, records, slice.lo, slice.hi, at, crcValid);
    }

    /** Fails the read, or passes over or reports the batch at `batchAt`, as onCorrupt says. */
    private void damaged(String reason, long position, String path, long batchAt) throws IOException {
        String said = slice.segment + ": byte " + position + ": " + path + ": " + reason;
        switch (settings.onCorrupt) {
            case "skip": return;
            case "report": out.corruption(batchAt, said); return;
            default: throw new IOException(said + " (onCorrupt=skip passes over damaged batches, "
                                           + "onCorrupt=report gives a row for each)");
        }
    }

    /** Makes the `n` bytes at file position `at` be in the window, reading a window's worth from there. */
    private void load(long at, int n) throws IOException {
        if (at >= windowAt && at + n <= windowAt + windowLength) {
            return;
        }
        int want = (int) Math.min(Math.max(n, windowBytes), end - at);
        if (window.length < want) {
            window = new byte[want];
        }
        file.readFully(at, window, 0, want);
        windowAt = at;
        windowLength = want;
    }

    private int int32(long at) {
        int i = (int) (at - windowAt);
        return (window[i] & 0xFF) << 24 | (window[i + 1] & 0xFF) << 16 | (window[i + 2] & 0xFF) << 8 | (window[i + 3] & 0xFF);
    }
}

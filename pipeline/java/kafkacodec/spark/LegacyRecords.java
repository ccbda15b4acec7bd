package kafkacodec.spark;

import kafkacodec.generated.LegacyLogEntry;
import kafkacodec.runtime.DecodeException;

/** The records of a legacy (magic 0 or 1) log entry, a compressed wrapper expanded as Kafka's deep iterator
 *  does and as codec/records.py's legacy_records gives them: inner offsets relative to the wrapper's for
 *  magic 1, a log-append-time wrapper's timestamp on every inner record. Errors found here, which no one
 *  byte holds, are at position -1: the entry's first byte. */
final class LegacyRecords {
    private static final int COMPRESSION = 0x07, TIMESTAMP_TYPE_AT = 3;

    final byte[][] keys, values;
    final long[] offsets, timestamps;
    final int[] timestampTypes;

    private LegacyRecords(int n) {
        keys = new byte[n][];
        values = new byte[n][];
        offsets = new long[n];
        timestamps = new long[n];
        timestampTypes = new int[n];
    }

    static LegacyRecords of(LegacyLogEntry entry, boolean verify) throws DecodeException {
        LegacyLogEntry.LegacyMessage m = entry.message;
        int attributes = (int) m.attributes;
        if ((attributes & COMPRESSION) == 0) {
            LegacyRecords one = new LegacyRecords(1);
            one.keys[0] = m.key();
            one.values[0] = (byte[]) m.value(verify);
            one.offsets[0] = entry.offset;
            one.timestamps[0] = m.magic == 0 ? -1 : m.timestamp;
            one.timestampTypes[0] = m.magic == 0 ? -1 : (attributes >> TIMESTAMP_TYPE_AT) & 1;
            return one;
        }
        boolean logAppend = m.magic >= 1 && ((attributes >> TIMESTAMP_TYPE_AT) & 1) == 1;
        Object value;
        try {
            value = m.value(verify);
        } catch (DecodeException e) {
            if (e.path.equals("legacy_log_entry/legacy_message/crc")) {  // an inner message's (the wrapper's was read)
                throw new DecodeException("an inner message's " + e.reason, -1, "legacy_log_entry/message/value");
            }
            throw e;
        }
        if (value == null) {
            throw new DecodeException("found invalid compressed record set with null value", -1,
                                      "legacy_log_entry/message/value");
        }
        if (!(value instanceof LegacyLogEntry.MessageSet)) {
            throw new DecodeException("unknown compression codec id " + (attributes & COMPRESSION), -1,
                                      "legacy_log_entry/message/value");
        }
        LegacyLogEntry[] inner = ((LegacyLogEntry.MessageSet) value).entries;
        if (inner.length == 0) {
            throw new DecodeException("found invalid compressed record set with no inner records", -1,
                                      "legacy_log_entry/message/value");
        }
        long base = 0;  // magic 0 inner offsets are absolute, and so are those of a v1 wrapper at offset 0
        if (m.magic >= 1 && entry.offset != 0) {
            long lastRelative = inner[inner.length - 1].offset;
            base = entry.offset - lastRelative;
            if (base < 0) {
                throw new DecodeException("found invalid wrapper offset in compressed v1 message set, wrapper offset '"
                                          + entry.offset + "' is less than the last inner message offset '"
                                          + lastRelative + "'", -1, "legacy_log_entry/offset");
            }
        }
        LegacyRecords out = new LegacyRecords(inner.length);
        for (int i = 0; i < inner.length; i++) {
            LegacyLogEntry.LegacyMessage im = inner[i].message;
            if ((im.attributes & COMPRESSION) != 0) {
                throw new DecodeException("inner messages must not be compressed", -1, "legacy_log_entry/message");
            }
            out.keys[i] = im.key();
            out.values[i] = (byte[]) im.value(verify);
            out.offsets[i] = base + inner[i].offset;
            if (logAppend) {
                out.timestamps[i] = m.timestamp;
                out.timestampTypes[i] = 1;
            } else if (im.magic == 0) {
                out.timestamps[i] = -1;
                out.timestampTypes[i] = -1;
            } else {
                out.timestamps[i] = im.timestamp;
                out.timestampTypes[i] = (int) ((im.attributes >> TIMESTAMP_TYPE_AT) & 1);
            }
        }
        return out;
    }
}

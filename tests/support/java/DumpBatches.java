import java.nio.file.Files;
import java.nio.file.Paths;

import kafkacodec.generated.LegacyLogEntry;
import kafkacodec.generated.RecordBatch;
import kafkacodec.runtime.DecodeException;

/** Every v2 batch and legacy entry of files through the generated Java readers, one JSON line each; the first
 *  error as a file's last line. CRCs checked unless the first argument is --no-verify. The test compares these lines with what the Python readers give. */
public final class DumpBatches {
    /** Arguments: [--no-verify] file...; each file's lines follow a line {"file": <index>}. */
    public static void main(String[] args) throws Exception {
        boolean verify = !(args.length > 0 && args[0].equals("--no-verify"));
        StringBuilder out = new StringBuilder();
        for (int i = verify ? 0 : 1, k = 0; i < args.length; i++, k++) {
            out.append("{\"file\": ").append(k).append("}\n");
            dump(Files.readAllBytes(Paths.get(args[i])), verify, out);
        }
        System.out.print(out);
    }

    static void dump(byte[] b, boolean verify, StringBuilder out) {
        int pos = 0;
        try {
            while (pos < b.length) {
                if (pos + 16 < b.length && b[pos + 16] < 2) {  // a legacy entry
                    LegacyLogEntry entry = LegacyLogEntry.read(b, pos, b.length, verify);
                    out.append(legacy(pos, entry, verify)).append("\n");
                    pos = entry._end;
                    continue;
                }
                RecordBatch batch = RecordBatch.read(b, pos, b.length, verify);
                StringBuilder line = new StringBuilder();  // a batch's line, once all of it has read
                line.append("{\"pos\": ").append(pos).append(", \"base_offset\": ").append(batch.base_offset)
                    .append(", \"attributes\": ").append(batch.attributes)
                    .append(", \"producer_id\": ").append(batch.producer_id).append(", \"records\": [");
                RecordBatch.Record[] items = batch.records(verify).items;
                for (int i = 0; i < items.length; i++) {
                    RecordBatch.Record r = items[i];
                    line.append(i == 0 ? "" : ", ").append("[").append(r.offset).append(", ").append(r.timestamp)
                        .append(", ").append(hex(r.key())).append(", ").append(hex(r.value())).append(", [");
                    for (int j = 0; j < r.headers.length; j++) {
                        line.append(j == 0 ? "" : ", ").append("[").append(text(r.headers[j].key())).append(", ")
                            .append(hex(r.headers[j].value())).append("]");
                    }
                    line.append("]]");
                }
                out.append(line).append("]}\n");
                pos = batch._end;
            }
        } catch (DecodeException e) {
            out.append("{\"error\": ").append(text(e.path)).append(", \"position\": ").append(e.position)
                .append("}\n");
        }
    }

    /** A legacy entry's line: its fields, and its value's bytes or, for a wrapper, its entries' lines. */
    static String legacy(int pos, LegacyLogEntry entry, boolean verify) throws DecodeException {
        LegacyLogEntry.LegacyMessage m = entry.message;
        StringBuilder line = new StringBuilder();
        line.append("{\"pos\": ").append(pos).append(", \"offset\": ").append(entry.offset)
            .append(", \"magic\": ").append(m.magic).append(", \"attributes\": ").append(m.attributes)
            .append(", \"timestamp\": ").append(m.timestamp).append(", \"key\": ").append(hex(m.key()))
            .append(", \"value\": ");
        Object value = m.value(verify);
        if (value instanceof LegacyLogEntry.MessageSet) {
            line.append("[");
            LegacyLogEntry[] inner = ((LegacyLogEntry.MessageSet) value).entries;
            for (int i = 0; i < inner.length; i++) {
                line.append(i == 0 ? "" : ", ").append(legacy(-1, inner[i], verify));
            }
            line.append("]");
        } else {
            line.append(hex((byte[]) value));
        }
        return line.append("}").toString();
    }

    static String hex(byte[] v) {
        if (v == null) {
            return "null";
        }
        StringBuilder s = new StringBuilder("\"");
        for (byte x : v) {
            s.append(String.format("%02x", x & 0xFF));
        }
        return s.append('"').toString();
    }

    static String text(String v) {
        StringBuilder s = new StringBuilder("\"");
        for (char ch : v.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                s.append('\\').append(ch);
            } else if (ch < 0x20 || ch > 0x7e) {
                s.append(String.format("\\u%04x", (int) ch));
            } else {
                s.append(ch);
            }
        }
        return s.append('"').toString();
    }
}

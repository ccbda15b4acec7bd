package kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.types.StructType;

/** The options of a read that every task applies, as the planner gave them. */
final class ReadSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    static final int ROWS_PER_BATCH = 4096;
    static final long BYTES_PER_BATCH = 16L << 20;  // keys and values of a columnar batch, past which it goes
    // read from the file at once (whole batches, never a whole segment): from object stores, and locally
    static final int WINDOW_BYTES = 8 << 20;
    static final int LOCAL_WINDOW_BYTES = 1 << 20;
    // a batch larger than this is refused where the Python source refuses it (LIMITS.max_batch_bytes): a
    // legacy entry, or a v2 batch cut by the offset bounds
    static final long MAX_BATCH_BYTES = 64L << 20;
    // decoded keys and values (valueFormat, keyFormat) a columnar batch takes at most: past it, a value is an
    // error that says so
    static final long MAX_DECODED_BYTES = 256L << 20;

    final boolean includeHeaders;
    final boolean verifyCrc;
    final String onCorrupt;  // fail, skip or report
    final boolean readCommitted;
    final boolean includeControl;
    final Set<String> fromBatchHeader;  // the columns a v2 batch's header gives for all its records
    final List<AvroColumn> typed;  // keys and values read as Avro (valueFormat, keyFormat)

    ReadSettings(Map<String, String> options) {
        includeHeaders = flag(options, "includeheaders", false);
        verifyCrc = flag(options, "verifycrc", true);
        onCorrupt = options.getOrDefault("oncorrupt", "fail").toLowerCase(Locale.ROOT);
        readCommitted = options.getOrDefault("isolationlevel", "read_uncommitted").equalsIgnoreCase("read_committed");
        includeControl = flag(options, "includecontrolrecords", false);
        fromBatchHeader = Columns.fromBatchHeader(options);
        typed = typed(options);
    }

    /** The planner's typed columns (option typedColumns, JSON: pipeline/values/jvm_spec.py), each with the
     *  Spark type of its decoded column. */
    private static List<AvroColumn> typed(Map<String, String> options) {
        List<AvroColumn> out = new ArrayList<>();
        String json = options.get("typedcolumns");
        if (json == null) {
            return out;
        }
        StructType all = Columns.all(options);
        try {
            for (JsonNode spec : new ObjectMapper().readTree(json)) {
                out.add(new AvroColumn(spec, all.apply(spec.get("field").asText() + "Decoded").dataType()));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(KafkaLogSource.NAME + ": option typedColumns is not the planner's JSON: "
                                               + e.getMessage());
        }
        return out;
    }

    private static boolean flag(Map<String, String> options, String name, boolean otherwise) {
        String v = options.get(name);
        return v == null ? otherwise : Boolean.parseBoolean(v);
    }
}

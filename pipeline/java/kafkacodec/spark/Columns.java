package kafkacodec.spark;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** kafka-log's columns, as the planner hands them over in the read's options (from pipeline/columns.py
 *  and pipeline/headers.py, which the Python source reads by too): every column (`columns`, in DDL), and
 *  those a v2 batch's header gives for all its records (`batchHeaderColumns`). */
final class Columns {
    private Columns() {}

    /** Every column, headers included. */
    static StructType all(Map<String, String> options) {
        return StructType.fromDDL(KafkaLogSource.planned(options, "columns"));
    }

    /** Every column, headers only when asked for. */
    static StructType schema(Map<String, String> options, boolean includeHeaders) {
        StructType out = new StructType();
        for (StructField f : all(options).fields()) {
            if (includeHeaders || !f.name().equals("headers")) {
                out = out.add(f);
            }
        }
        return out;
    }

    static Set<String> fromBatchHeader(Map<String, String> options) {
        return new HashSet<>(Set.of(KafkaLogSource.planned(options, "batchHeaderColumns").split(",")));
    }
}

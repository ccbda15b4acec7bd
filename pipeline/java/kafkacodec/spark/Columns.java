package kafkacodec.spark;

import java.util.Set;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** kafka-log's columns, in the order pipeline/columns.py gives them: Spark's Kafka source's, headers
 *  when asked for, then ours. */
final class Columns {
    private Columns() {}

    static final StructType HEADER = new StructType()
        .add("key", DataTypes.StringType).add("value", DataTypes.BinaryType);

    /** The columns a v2 batch's header gives for all its records, when its offsets follow one another. */
    static final Set<String> FROM_BATCH_HEADER = Set.of(
        "topic", "partition", "offset", "timestampType", "magic", "compression", "producerId", "producerEpoch",
        "sequence", "isTransactional", "isControl", "crcValid", "segment", "position", "corruption");

    static StructType schema(boolean includeHeaders) {
        StructType s = new StructType()
            .add("key", DataTypes.BinaryType).add("value", DataTypes.BinaryType)
            .add("topic", DataTypes.StringType).add("partition", DataTypes.IntegerType)
            .add("offset", DataTypes.LongType).add("timestamp", DataTypes.TimestampType)
            .add("timestampType", DataTypes.IntegerType);
        if (includeHeaders) {
            s = s.add(new StructField("headers", DataTypes.createArrayType(HEADER, true), true, Metadata.empty()));
        }
        return s.add("magic", DataTypes.IntegerType).add("compression", DataTypes.StringType)
            .add("producerId", DataTypes.LongType).add("producerEpoch", DataTypes.IntegerType)
            .add("sequence", DataTypes.IntegerType).add("isTransactional", DataTypes.BooleanType)
            .add("isControl", DataTypes.BooleanType).add("crcValid", DataTypes.BooleanType)
            .add("segment", DataTypes.StringType).add("position", DataTypes.LongType)
            .add("corruption", DataTypes.StringType);
    }
}

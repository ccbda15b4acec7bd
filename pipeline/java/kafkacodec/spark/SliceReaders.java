package kafkacodec.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;

/** Columnar readers of slices, sent to the executors with the session's Hadoop settings (so that s3a: and
 *  the rest open there as the cluster and the session configured them). */
final class SliceReaders implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    private final StructType schema;
    private final ReadSettings settings;
    private final SerializableConfiguration hadoop;

    SliceReaders(StructType schema, ReadSettings settings, Map<String, String> options) {
        this.schema = schema;
        this.settings = settings;
        // the session's Hadoop settings (spark.hadoop.* and what was set on the session since), with the
        // read's own fs.* options on top, as Spark's file sources take them
        Configuration conf = SparkSession.active().sessionState().newHadoopConf();
        options.forEach((k, v) -> {
            if (k.startsWith("fs.")) {
                conf.set(k, v);
            }
        });
        this.hadoop = new SerializableConfiguration(conf);
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return true;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        throw new UnsupportedOperationException(KafkaLogSource.NAME + " reads in columnar batches only");
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        try {
            return new SliceReader((Slice) partition, schema, settings, hadoop.value());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

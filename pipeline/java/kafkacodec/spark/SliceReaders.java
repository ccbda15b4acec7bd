package kafkacodec.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;

/** Columnar readers of slices, sent to the executors with the driver's Hadoop settings (so that s3a: and
 *  the rest open there as the cluster configured them). */
final class SliceReaders implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    private final StructType schema;
    private final ReadSettings settings;
    private final SerializableConfiguration hadoop;

    SliceReaders(StructType schema, ReadSettings settings) {
        this.schema = schema;
        this.settings = settings;
        this.hadoop = new SerializableConfiguration(SparkContext.getOrCreate().hadoopConfiguration());
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

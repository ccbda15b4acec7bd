package kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** `kafka-log-jvm`: the records of the slices that kafkacodec's planner chose (option `slices`, JSON;
 *  `kafkacodec.pipeline.read` plans them and reads through this source), decoded by the Java readers
 *  generated from the schemas, in columnar batches, with column pruning and pushed-down bounds. */
public final class KafkaLogSource implements TableProvider, DataSourceRegister {
    static final String NAME = "kafka-log-jvm";

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return Columns.schema(options, new ReadSettings(options).includeHeaders);
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;  // a narrower schema of kafka-log's columns, as the Python source takes
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new LogTable(schema);
    }

    /** An option only kafkacodec's planner gives (the slices, the columns), which a read must have. */
    static String planned(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException(NAME + " reads what kafkacodec plans: read through "
                                               + "kafkacodec.pipeline.read(spark, path, ...), not format(\"" + NAME
                                               + "\") (no option " + name + ")");
        }
        return value;
    }

    static List<Slice> slices(CaseInsensitiveStringMap options) {
        String json = planned(options, "slices");
        List<Slice> out = new ArrayList<>();
        try {
            for (JsonNode s : new ObjectMapper().readTree(json)) {
                out.add(Slice.of(s));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(NAME + ": option slices is not the planner's JSON: " + e.getMessage());
        }
        return out;
    }

    private static final class LogTable implements SupportsRead {
        private final StructType schema;

        LogTable(StructType schema) {
            this.schema = schema;
        }

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public StructType schema() {
            return schema;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            StructType ours = Columns.all(options);
            for (String name : schema.fieldNames()) {
                if (ours.getFieldIndex(name).isEmpty()
                        || !ours.apply(name).dataType().sameType(schema.apply(name).dataType())) {
                    throw new IllegalArgumentException(NAME + ": the schema's column " + name
                                                       + " is not one of kafka-log's, with its type");
                }
            }
            return new LogScan(schema, ours, slices(options), new ReadSettings(options), options.asCaseSensitiveMap());
        }
    }
}

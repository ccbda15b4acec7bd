package kafkacodec.spark;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** A read of planned slices: the columns Spark needs, and the slices narrowed by pushed filters on topic,
 *  partition and offset. Every filter is handed back, so Spark still evaluates it: the bounds only skip
 *  slices and batches. */
final class LogScan implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownV2Filters, Scan, Batch {
    private StructType schema;
    private final StructType all;  // every column of kafka-log
    private final List<Slice> planned;
    private final ReadSettings settings;
    private final Map<String, String> options;
    private Set<String> topics;  // null: any
    private Set<Integer> partitions;
    private long lo = Long.MIN_VALUE, hi = Long.MAX_VALUE;
    private final List<Predicate> used = new ArrayList<>();

    LogScan(StructType schema, StructType all, List<Slice> planned, ReadSettings settings, Map<String, String> options) {
        this.all = all;
        this.options = options;
        this.schema = schema;
        this.planned = planned;
        this.settings = settings;
    }

    @Override
    public void pruneColumns(StructType required) {
        // headers and decoded keys and values whole even where a query names one of their fields (Spark
        // prunes nested fields too): the readers fill them whole, and may hand back more than asked
        StructType pruned = new StructType();
        for (StructField f : required.fields()) {
            pruned = pruned.add(all.apply(f.name()));
        }
        schema = pruned;
    }

    @Override
    public Predicate[] pushPredicates(Predicate[] predicates) {
        for (Predicate p : predicates) {
            if (bound(p)) {
                used.add(p);
            }
        }
        return predicates;
    }

    @Override
    public Predicate[] pushedPredicates() {
        return used.toArray(new Predicate[0]);
    }

    /** Narrows the read by `p` where it is a bound on topic, partition or offset; whether it was. */
    private boolean bound(Predicate p) {
        Expression[] c = p.children();
        if (c.length < 2 || !(c[0] instanceof NamedReference) || ((NamedReference) c[0]).fieldNames().length != 1) {
            return false;
        }
        String column = ((NamedReference) c[0]).fieldNames()[0];
        List<Object> values = new ArrayList<>();
        for (int i = 1; i < c.length; i++) {
            if (!(c[i] instanceof Literal) || ((Literal<?>) c[i]).value() == null) {
                return false;
            }
            values.add(((Literal<?>) c[i]).value());
        }
        String op = p.name();
        boolean equal = op.equals("=") || op.equals("IN");
        if (column.equals("topic") && equal) {
            Set<String> named = new HashSet<>();
            values.forEach(v -> named.add(v.toString()));
            topics = topics == null ? named : intersect(topics, named);
            return true;
        }
        if (column.equals("partition") && equal) {
            Set<Integer> named = new HashSet<>();
            values.forEach(v -> named.add(((Number) v).intValue()));
            partitions = partitions == null ? named : intersect(partitions, named);
            return true;
        }
        if (!column.equals("offset") || values.size() != 1 && !op.equals("IN")) {
            return false;
        }
        long v = ((Number) values.get(0)).longValue();
        switch (op) {
            case "=": lo = Math.max(lo, v); hi = Math.min(hi, after(v)); return true;
            case ">": lo = Math.max(lo, after(v)); return true;
            case ">=": lo = Math.max(lo, v); return true;
            case "<": hi = Math.min(hi, v); return true;
            case "<=": hi = Math.min(hi, after(v)); return true;
            case "IN":
                long least = Long.MAX_VALUE, most = Long.MIN_VALUE;
                for (Object o : values) {
                    least = Math.min(least, ((Number) o).longValue());
                    most = Math.max(most, ((Number) o).longValue());
                }
                lo = Math.max(lo, least);
                hi = Math.min(hi, after(most));
                return true;
            default: return false;
        }
    }

    /** The exclusive bound just past offset `v`; none past the largest long (no offset is that large). */
    private static long after(long v) {
        return v == Long.MAX_VALUE ? Long.MAX_VALUE : v + 1;
    }

    private static <T> Set<T> intersect(Set<T> a, Set<T> b) {
        Set<T> out = new HashSet<>(a);
        out.retainAll(b);
        return out;
    }

    @Override
    public Scan build() {
        return this;
    }

    @Override
    public StructType readSchema() {
        return schema;
    }

    @Override
    public String description() {
        return KafkaLogSource.NAME + " (" + planned.size() + " planned slices)";
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
        List<InputPartition> out = new ArrayList<>();
        for (Slice s : planned) {
            if (topics != null && !topics.contains(s.topic) || partitions != null && !partitions.contains(s.partition)) {
                continue;
            }
            Slice narrowed = s.narrowed(lo, hi);
            if (narrowed != null) {
                out.add(narrowed);
            }
        }
        return out.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new SliceReaders(schema, settings, options);
    }
}

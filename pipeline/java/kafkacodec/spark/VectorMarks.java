package kafkacodec.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;

/** How many values a column vector and every vector inside it held at a mark: a value that fails half
 *  way through is taken back out, so that a row's fields stay in step. */
final class VectorMarks {
    private final WritableColumnVector[] vectors;
    private final int[] marks;

    VectorMarks(WritableColumnVector root) {
        List<WritableColumnVector> all = new ArrayList<>();
        collect(root, all);
        vectors = all.toArray(new WritableColumnVector[0]);
        marks = new int[vectors.length];
    }

    private static void collect(WritableColumnVector v, List<WritableColumnVector> out) {
        out.add(v);
        for (int i = 0; i < children(v.dataType()); i++) {
            collect((WritableColumnVector) v.getChild(i), out);
        }
    }

    /** The vectors Spark's on-heap vectors keep inside one of type `t`. */
    private static int children(DataType t) {
        if (t instanceof StructType) {
            return ((StructType) t).fields().length;
        }
        if (t instanceof MapType) {
            return 2;
        }
        boolean bytes = t instanceof StringType || t instanceof BinaryType
                        || t instanceof DecimalType && ((DecimalType) t).precision() > 18;
        return t instanceof ArrayType || bytes ? 1 : 0;
    }

    boolean of(WritableColumnVector root) {
        return vectors[0] == root;
    }

    void mark() {
        for (int i = 0; i < vectors.length; i++) {
            marks[i] = vectors[i].getElementsAppended();
        }
    }

    /** Back to the mark; the positions freed read as not null again (appending a number does not say so). */
    void rollBack() {
        for (int i = 0; i < vectors.length; i++) {
            int extra = vectors[i].getElementsAppended() - marks[i];
            if (extra > 0) {
                vectors[i].putNotNulls(marks[i], extra);
                vectors[i].addElementsAppended(-extra);
            }
        }
    }
}

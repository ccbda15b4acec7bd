package kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import org.apache.spark.sql.connector.read.InputPartition;

/** One task's work, as kafkacodec's planner (pipeline/plan.py) made it: a byte range of one segment and
 *  the offset bounds and aborted transactions to apply. */
final class Slice implements InputPartition, Serializable {
    private static final long serialVersionUID = 1L;

    final String uri;       // where the JVM opens the file (a Hadoop FileSystem URI)
    final String segment;   // the segment column: the file as the planner named it
    final String topic;
    final int partition;
    final long start;
    final long end;         // -1: to the end of the file
    final long lo;          // first offset read; Long.MIN_VALUE: no bound
    final long hi;          // offset bound (exclusive); Long.MAX_VALUE: no bound
    final long[] aborted;   // (producer id, first offset, marker offset) triples

    Slice(String uri, String segment, String topic, int partition, long start, long end, long lo, long hi,
          long[] aborted) {
        this.uri = uri;
        this.segment = segment;
        this.topic = topic;
        this.partition = partition;
        this.start = start;
        this.end = end;
        this.lo = lo;
        this.hi = hi;
        this.aborted = aborted;
    }

    static Slice of(JsonNode s) {
        JsonNode triples = s.get("aborted");
        long[] aborted = new long[triples.size() * 3];
        for (int i = 0; i < triples.size(); i++) {
            for (int k = 0; k < 3; k++) {
                aborted[3 * i + k] = triples.get(i).get(k).asLong();
            }
        }
        return new Slice(s.get("uri").asText(), s.get("segment").asText(), s.get("topic").asText(),
                         s.get("partition").asInt(), s.get("start").asLong(),
                         s.get("end").isNull() ? -1 : s.get("end").asLong(),
                         s.get("lo").isNull() ? Long.MIN_VALUE : s.get("lo").asLong(),
                         s.get("hi").isNull() ? Long.MAX_VALUE : s.get("hi").asLong(), aborted);
    }

    /** The same work with offset bounds narrowed to [lo, hi); null when nothing is left. */
    Slice narrowed(long lo, long hi) {
        long a = Math.max(this.lo, lo), b = Math.min(this.hi, hi);
        return a >= b ? null : new Slice(uri, segment, topic, partition, start, end, a, b, aborted);
    }

    boolean isAborted(long producerId, long offset) {
        for (int i = 0; i < aborted.length; i += 3) {
            if (aborted[i] == producerId && aborted[i + 1] <= offset && offset <= aborted[i + 2]) {
                return true;
            }
        }
        return false;
    }
}

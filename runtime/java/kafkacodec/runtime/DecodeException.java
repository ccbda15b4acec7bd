package kafkacodec.runtime;

/** Bytes a generated reader refuses: what is wrong, the byte where, and the schema path of the field. */
public class DecodeException extends Exception {
    public final long position;
    public final String path;

    public DecodeException(String message, long position, String path) {
        super(message + " (at byte " + position + ", " + path + ")");
        this.position = position;
        this.path = path;
    }
}

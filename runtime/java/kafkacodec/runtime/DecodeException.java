package kafkacodec.runtime;

/** Bytes a generated reader refuses: what is wrong, the byte where, and the schema path of the field. */
public class DecodeException extends Exception {
    public final long position;
    public final String path;
    public final String reason;

    public DecodeException(String message, long position, String path) {
        super(message + " (at byte " + position + ", " + path + ")");
        this.reason = message;
        this.position = position;
        this.path = path;
    }

    /** This error as found in `read`, the bytes a processor gave for a field at `at` of `field`: where
     *  those are other bytes (decompressed), it is moved to the field's first byte. */
    public DecodeException within(byte[] read, byte[] field, long at) {
        return read == field ? this : new DecodeException(reason, at, path);
    }
}

meta:
  id: legacy_log_entry
  title: Kafka log entry, message formats v0 and v1 (magic 0 and 1)
  license: Apache-2.0
  endian: be
doc: |
  One entry of a message set as Kafka wrote it before 0.11: an offset, a size and one message.
  Magic 0 messages (Kafka 0.8 to 0.9) have no timestamp; magic 1 (0.10, KIP-32) adds one. A
  compressed message is a wrapper whose value holds a nested message set, compressed as one
  stream; the wrapper's offset is that of its last inner message. Inner offsets are absolute
  for magic 0 and relative (0..n-1) for magic 1; only one level of nesting is allowed.
doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java
-hot: true  # read by compiled code when it is built (see README, Backends)
-record:
  doc: |
    The record a consumer reads from an entry holding one uncompressed message, with Kafka's
    rules for its timestamp; the codec layer reads runs of such entries, and the inner messages
    of a compressed wrapper, into its records without the entries' objects (and counts a magic
    1 wrapper's inner offsets back from the wrapper's own, which is the last one's).
  params:
    - id: log_append
      type: u1
      doc: 1 for the inner messages of a wrapper stamped with log-append time, which report its time.
    - id: append_time
      type: s8
      doc: That wrapper's timestamp.
    - id: max_size
      type: s4
      doc: The largest message_size taken; larger entries are left to the reader, which names them.
  when: message_size <= max_size and message.compression == compression_type::none
  checksum: message.crc
  fields:
    key: message.key
    value: message.value
    offset: offset
    timestamp: "log_append != 0 ? append_time : message.magic == 0 ? -1 : message.timestamp"
    timestamp_type: "log_append != 0 ? 1 : message.timestamp_type.to_i"
    headers: []
-record-writer:
  doc: |
    How records are packed as entries of one message each: offsets relative to the first inside
    a magic 1 wrapper; a record without an offset takes the next one after the base offset, one
    without a timestamp -1; magic 0 and 1 hold no headers.
  params:
    - id: magic
      type: s1
    - id: attributes
      type: u1
    - id: fixed
      type: u1
      doc: 1 where every message takes fixed_timestamp (log-append time).
    - id: fixed_timestamp
      type: s8
    - id: relative
      type: u1
      doc: 1 for the entries inside a magic 1 wrapper.
    - id: first_offset
      type: s8
    - id: next_offset
      type: s8
  fields:
    key: ~
    value: ~
    headers: []
    timestamp: -1
    offset: next_offset + _index
  when: headers.size == 0  # magic 0 and 1 hold no headers: the Python writer refuses them
  largest: timestamp
  pack:
    offset: "relative != 0 ? offset - first_offset : offset"
    message:
      magic: magic
      attributes: attributes
      timestamp: "fixed != 0 ? fixed_timestamp : timestamp"
      key: key
      value: value
seq:
  - id: offset
    type: s8
    -default: 0
    doc: |
      Absolute offset of the message; a compressed wrapper holds the offset of its last inner
      message. Inside a magic 1 wrapper, offsets are relative to the wrapper's first offset.
  - id: message_size
    type: s4
    valid:
      min: 14
    -derive:
      length-of: message
    doc: Bytes of the message that follows; Kafka rejects sizes below 14.
  - id: message
    size: message_size
    type: legacy_message
    -require-eos: true
    doc: The message.
types:
  legacy_message:
    -hot: true
    doc: A message (LegacyRecord); its CRC-32 covers every byte from `magic` to its end.
    doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java
    seq:
      - id: crc
        type: u4
        -checksum:
          algorithm: crc32
          from: magic
        doc: CRC-32 (IEEE, java.util.zip.CRC32) of the bytes from `magic` to the end of the message.
      - id: magic
        type: s1
        valid:
          any-of: [0, 1]
        -default: 1
        doc: Message format version, 0 or 1.
      - id: attributes
        type: u1
        -default: 0
        doc: Bits 0-2 compression codec; bit 3 timestamp type (magic 1 only); bits 4-7 unused.
      - id: timestamp
        type: s8
        if: magic >= 1
        -default: -1
        doc: Timestamp in milliseconds, magic 1 only; -1 for none.
      - id: key_length
        type: s4
        -derive:
          length-of: key
          if-absent: -1
        doc: Length of the key in bytes; -1 (any negative value) for a null key.
      - id: key
        size: key_length
        if: key_length >= 0
        doc: The key, or null.
      - id: value_length
        type: s4
        -derive:
          length-of: value
          if-absent: -1
        doc: Length of the value in bytes; -1 for a null value.
      - id: value
        size: value_length
        if: value_length >= 0
        -lazy: true
        process: kafka_compression(compression.to_i, magic)
        type:
          switch-on: compression
          cases:
            compression_type::gzip: message_set
            compression_type::snappy: message_set
            compression_type::lz4: message_set
        doc: |
          The value, or null. In a compressed wrapper: the compressed bytes of the nested message
          set, decoded into its entries on first access (the wrapper's CRC is checked without it).
    instances:
      compression:
        value: attributes & 0x07
        enum: compression_type
        doc: Codec of a wrapper's value; none for an ordinary message.
      timestamp_type:
        value: "magic == 0 ? timestamp_type::no_timestamp : (attributes >> 3) & 1"
        enum: timestamp_type
        doc: Meaning of `timestamp` (magic 1); magic 0 messages have none.
  message_set:
    -hot: true
    doc: The entries nested in a compressed wrapper.
    seq:
      - id: entries
        type: legacy_log_entry
        repeat: eos
        doc: Entries with uncompressed messages (one level of nesting only).
enums:
  compression_type:
    0:
      id: none
      doc: Uncompressed.
    1:
      id: gzip
      doc: gzip (RFC 1952).
    2:
      id: snappy
      doc: Snappy in snappy-java's stream framing.
    3:
      id: lz4
      doc: LZ4 frame; magic 0 writes a wrong header checksum that readers must ignore.
  timestamp_type:
    -1:
      id: no_timestamp
      doc: Magic 0 messages carry no timestamp.
    0:
      id: create_time
      doc: Timestamp set by the producer.
    1:
      id: log_append_time
      doc: Timestamp set by the broker; inner messages of such a wrapper report the wrapper's.

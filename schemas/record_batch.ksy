meta:
  id: record_batch
  title: Kafka record batch, message format v2 (magic 2)
  license: Apache-2.0
  endian: be
  imports:
    - varint
    - varlong
doc: |
  The unit of Kafka's log since Kafka 0.11 (KIP-98): a 61-byte header followed by the records,
  which are compressed as one stream when the batch names a codec. Every segment file written by
  Kafka 0.11 and later holds a sequence of these batches, unless it was written in an older
  message format. The CRC-32C covers the bytes from `attributes` to the end of the batch, so a
  broker can assign `base_offset` and `partition_leader_epoch` without recomputing it.
doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
-hot: true  # read by compiled code when it is built (see README, Backends)
seq:
  - id: base_offset
    type: s8
    -default: 0
    doc: |
      Offset of the first record of the batch as it was first written; kept when compaction
      removes records, so the first remaining record may have a larger offset.
  - id: batch_length
    type: s4
    valid:
      min: 49
    -derive:
      length-from: partition_leader_epoch
    doc: |
      Number of bytes after this field; the whole batch is 12 bytes longer. Kafka calls a batch
      shorter than 61 bytes in total corrupt.
  - id: partition_leader_epoch
    type: s4
    -default: -1
    doc: Epoch of the leader that appended the batch, -1 when unknown; not covered by the CRC.
  - id: magic
    type: s1
    valid: 2
    -default: 2
    doc: Message format version; byte 16 of every batch and every legacy entry.
  - id: crc
    type: u4
    -checksum:
      algorithm: crc32c
      from: attributes
    doc: CRC-32C (Castagnoli) of every byte from `attributes` to the end of the batch.
  - id: attributes
    type: u2
    -default: 0
    doc: |
      Bit field: bits 0-2 compression codec, bit 3 timestamp type, bit 4 transactional,
      bit 5 control batch, bit 6 delete horizon present. Readers use the low byte only.
  - id: last_offset_delta
    type: s4
    -default: "records.items.size == 0 ? 0 : records.items.last.offset_delta.value"
    doc: |
      Offset of the last record of the original batch minus `base_offset`. Kept through
      compaction, so it may exceed the largest offset delta of the records still present.
  - id: base_timestamp
    type: s8
    -default: -1
    doc: |
      Timestamp that record timestamp deltas are relative to, normally the first record's.
      When the delete-horizon bit is set it holds the delete horizon in milliseconds; -1 in an
      empty batch kept by the cleaner.
  - id: max_timestamp
    type: s8
    -default: -1
    doc: |
      Largest record timestamp (CreateTime), or the broker's append time (LogAppendTime), which
      then stands for every record's timestamp.
  - id: producer_id
    type: s8
    -default: -1
    doc: Idempotent or transactional producer id; -1 for none.
  - id: producer_epoch
    type: s2
    -default: -1
    doc: Epoch of that producer id; -1 for none.
  - id: base_sequence
    type: s4
    -default: -1
    doc: Sequence number of the first record; -1 for none. Record sequences wrap past 2^31-1.
  - id: records_count
    type: s4
    -derive:
      count-of: records.items
    doc: Number of records present in the batch, which compaction may have made smaller.
  - id: records
    size: batch_length - 49
    process: kafka_compression(compression.to_i, magic)
    type: records
    -lazy: true
    -require-eos: true
    doc: |
      The records, compressed as one stream by the codec in `attributes`. Decoded on first
      access; they must fill the section exactly.
instances:
  compression:
    value: attributes & 0x07
    enum: compression_type
    doc: Codec of the records section.
  timestamp_type:
    value: (attributes >> 3) & 1
    enum: timestamp_type
    doc: Whether record timestamps are the producer's (create time) or the broker's (log append time).
  is_transactional:
    value: (attributes & 0x10) != 0
    doc: The batch belongs to a transaction.
  is_control:
    value: (attributes & 0x20) != 0
    doc: The batch holds control records (transaction markers, KRaft control records).
  has_delete_horizon:
    value: (attributes & 0x40) != 0
    doc: "`base_timestamp` holds the delete horizon set by the log cleaner (Kafka 3.1 and later)."
  last_offset:
    value: base_offset + last_offset_delta
    doc: Offset of the last record of the original batch.
types:
  records:
    -hot: true
    doc: The (decompressed) records section of a batch.
    seq:
      - id: items
        type: record
        repeat: expr
        repeat-expr: _parent.records_count
        doc: Exactly `records_count` records; no bytes may remain after them.
  record:
    doc: One record; every length, count and delta is a zigzag varint.
    doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java
    -columnar: true
    -hot: true
    -record-writer:
      doc: |
        How a producer's records are packed into a batch's records section: deltas from the
        batch's first offset and base timestamp (the first record's); a record without an offset
        takes the next one after the batch's base offset, one without a timestamp -1.
      params:
        - id: first_offset
          type: s8
        - id: base_timestamp
          type: s8
        - id: next_offset
          type: s8
          doc: The offset of the first record when it has none (the batch's base offset).
      fields:
        key: ~
        value: ~
        headers: []
        timestamp: -1
        offset: next_offset + _index
      largest: timestamp
      pack:
        attributes: 0
        timestamp_delta: timestamp - base_timestamp
        offset_delta: offset - first_offset
        key: key
        value: value
        headers: headers
    seq:
      - id: length
        type: varint
        -derive:
          length-from: attributes
        doc: Bytes of the record after this field; a reader must consume exactly this many.
      - id: attributes
        type: s1
        -default: 0
        doc: Unused; written as 0 and not validated by readers.
      - id: timestamp_delta
        type: varlong
        -default: 0
        doc: Record timestamp minus the batch's `base_timestamp`; may be negative.
      - id: offset_delta
        type: varint
        doc: Record offset minus the batch's `base_offset`.
      - id: key_length
        type: varint
        -derive:
          length-of: key
          if-absent: -1
        doc: Length of the key in bytes; -1 (any negative value) for a null key.
      - id: key
        size: key_length.value
        if: key_length.value >= 0
        doc: The key, or null.
      - id: value_length
        type: varint
        -derive:
          length-of: value
          if-absent: -1
        doc: Length of the value in bytes; -1 (any negative value) for a null value (a tombstone).
      - id: value
        size: value_length.value
        if: value_length.value >= 0
        doc: The value, or null.
      - id: headers_count
        type: varint
        -derive:
          count-of: headers
        doc: Number of headers; Kafka rejects a negative count.
      - id: headers
        type: header
        repeat: expr
        repeat-expr: headers_count.value
        doc: Headers in the order the producer added them; keys may repeat.
    instances:
      offset:
        value: _parent._parent.base_offset + offset_delta.value
        -eager: true
        doc: Absolute offset of the record.
      timestamp:
        value: "_parent._parent.timestamp_type == timestamp_type::log_append_time ? _parent._parent.max_timestamp : _parent._parent.base_timestamp + timestamp_delta.value"
        -eager: true
        doc: |
          Timestamp of the record: the batch's `max_timestamp` for every record of a
          log-append-time batch, otherwise `base_timestamp` plus the record's delta.
  header:
    -hot: true
    doc: One record header, a UTF-8 key with an optional binary value.
    doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/header/internals/RecordHeader.java
    seq:
      - id: key_length
        type: varint
        -derive:
          length-of: key
        doc: Length of the key in bytes; must not be negative.
      - id: key
        type: str
        encoding: UTF-8
        size: key_length.value
        doc: The header key, UTF-8.
      - id: value_length
        type: varint
        -derive:
          length-of: value
          if-absent: -1
        doc: Length of the value in bytes; -1 for a null value.
      - id: value
        size: value_length.value
        if: value_length.value >= 0
        doc: The header value, or null.
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
      doc: LZ4 frame with independent 64 KiB blocks.
    4:
      id: zstd
      doc: Zstandard (Kafka 2.1 and later).
  timestamp_type:
    0:
      id: create_time
      doc: Timestamps set by the producer.
    1:
      id: log_append_time
      doc: Timestamps set by the broker when it appended the batch.

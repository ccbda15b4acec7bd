meta:
  id: producer_snapshot
  title: Kafka producer state snapshot (.snapshot)
  license: Apache-2.0
  endian: be
doc: |
  Since Kafka 0.11 (KIP-98), version 1 throughout: the idempotent and transactional producers' state
  at an offset (the number in the file name),
  written when a segment is rolled and at clean shutdown so that recovery replays only the log
  after it. Each producer keeps the metadata of its last batch, from which Kafka rejects
  duplicates and sequence gaps, and the first offset of its open transaction, from which the
  last stable offset follows.
doc-ref: https://github.com/apache/kafka/blob/trunk/storage/src/main/resources/message/ProducerSnapshot.json
seq:
  - id: version
    type: s2
    valid: 1
    -default: 1
    doc: File format version; 1 is the only one Kafka reads.
  - id: crc
    type: u4
    -checksum:
      algorithm: crc32c
      from: producer_count
    doc: CRC-32C (Castagnoli) of every byte after this field.
  - id: producer_count
    type: s4
    -derive:
      count-of: producers
    doc: Number of producer entries.
  - id: producers
    type: producer_entry
    repeat: expr
    repeat-expr: producer_count
    doc: One entry per producer id, in no particular order.
types:
  producer_entry:
    doc: One 46-byte entry.
    seq:
      - id: producer_id
        type: s8
        doc: The producer id.
      - id: producer_epoch
        type: s2
        doc: Its latest epoch.
      - id: last_sequence
        type: s4
        doc: Sequence number of the last record of its last batch.
      - id: last_offset
        type: s8
        doc: Offset of the last record of its last batch; -1 when no batch is known.
      - id: offset_delta
        type: s4
        doc: |
          Last sequence minus first sequence of that batch; the first sequence is
          `last_sequence - offset_delta`, wrapping below 0 to 2^31-1 as sequences do.
      - id: timestamp
        type: s8
        doc: Largest timestamp of that batch.
      - id: coordinator_epoch
        type: s4
        doc: Epoch of the transaction coordinator that wrote its last transaction marker; -1 for none.
      - id: current_txn_first_offset
        type: s8
        doc: First offset of its open transaction; -1 when none is open.

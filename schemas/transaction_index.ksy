meta:
  id: transaction_index
  title: Kafka transaction index (.txnindex)
  license: Apache-2.0
  endian: be
doc: |
  Since Kafka 0.11 (KIP-98, exactly-once delivery): the aborted transactions whose ABORT marker
  lies in the segment, in marker order, so that a read-committed fetch can skip their records
  without reading the markers. Unlike the offset
  and time indexes the file is neither memory-mapped nor preallocated: it is created on the
  first abort and grows by plain appends. Kafka stops reading when fewer than 34 bytes remain,
  so a torn final entry is ignored.
doc-ref: https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/TransactionIndex.java
seq:
  - id: entries
    type: aborted_txn
    repeat: eos
    doc: Entries with strictly increasing `last_offset`.
types:
  aborted_txn:
    doc: One 34-byte entry.
    seq:
      - id: version
        type: s2
        -default: 0
        doc: |
          Entry format version, 0. Kafka's reader looks only at the first byte of the two and
          rejects anything above 0.
      - id: producer_id
        type: s8
        doc: Producer id of the aborted transaction.
      - id: first_offset
        type: s8
        doc: Offset of the transaction's first record, possibly in an earlier segment.
      - id: last_offset
        type: s8
        doc: Offset of the ABORT marker; at or above the segment's base offset.
      - id: last_stable_offset
        type: s8
        doc: |
          Last stable offset when the abort completed: the first offset of the oldest
          transaction of another producer still open then, else `last_offset` + 1.

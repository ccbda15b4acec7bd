meta:
  id: time_index
  title: Kafka time index (.timeindex)
  license: Apache-2.0
  endian: be
doc: |
  Sparse map from timestamps to offsets, added in Kafka 0.10.1 (KIP-33) with message format v1: entry (T, O) says the largest timestamp seen in the
  segment up to offset O is T. Entries are appended only when the maximum timestamp grows, so a
  segment of magic 0 messages has an empty time index. Preallocated and zero-filled like the
  offset index, with one slot kept free for the entry written when the segment is rolled.
doc-ref: https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/TimeIndex.java
seq:
  - id: entries
    type: entry
    repeat: eos
    doc: Entries with non-decreasing timestamps; the file length must be a multiple of 12.
types:
  entry:
    doc: One 12-byte slot.
    seq:
      - id: timestamp
        type: s8
        doc: Largest timestamp in the segment up to `relative_offset`, in milliseconds.
      - id: relative_offset
        type: s4
        doc: Offset minus the segment's base offset.

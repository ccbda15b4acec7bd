meta:
  id: offset_index
  title: Kafka offset index (.index)
  license: Apache-2.0
  endian: be
doc: |
  Sparse map from offsets to byte positions in the segment's `.log` file, unchanged since Kafka 0.8. Kafka preallocates the
  file (10 MiB by default) and fills the unused tail with zeros, trimming it when the segment is
  rolled or closed; a reader of a crashed segment must stop at the first zero slot after the
  first. Since Kafka 2.0 each entry names the last offset of a batch (1.x wrote the first).
doc-ref: https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/OffsetIndex.java
seq:
  - id: entries
    type: entry
    repeat: eos
    doc: Entries in increasing offset order; the file length must be a multiple of 8.
types:
  entry:
    doc: One 8-byte slot.
    seq:
      - id: relative_offset
        type: s4
        doc: Offset minus the segment's base offset (the number in the file name).
      - id: position
        type: s4
        doc: Byte position in the `.log` file of the batch holding that offset.

# A record view (-record) over a flat root with nothing of Kafka in it: the differential test
# builds it with Cython and compares the two backends' _record_run on it.
meta:
  id: toy_record
  title: A record view read by both backends
  endian: be
-hot: true
-record:
  params:
    - id: bias
      type: s4
    - id: limit
      type: u2
  when: head.kind != kind::skipped and head.body_size <= limit
  checksum: head.crc
  fields:
    kind: head.kind.to_i
    number: "head.has_extra != 0 ? head.extra + bias : -1"
    body: head.body
    tail: tail
    notes: []
seq:
  - id: head_size
    type: u2
    valid:
      min: 8
    -derive:
      length-of: head
  - id: head
    type: head
    size: head_size
    -require-eos: true
  - id: tail_size
    type: s1
    -derive:
      length-of: tail
      if-absent: -1
  - id: tail
    size: tail_size
    if: tail_size >= 0
types:
  head:
    seq:
      - id: crc
        type: u4
        -checksum:
          algorithm: crc32
          from: kind
      - id: kind
        type: u1
        enum: kind
      - id: has_extra
        type: u1
      - id: extra
        type: s4
        if: has_extra != 0
      - id: body_size
        type: u2
        -derive:
          length-of: body
      - id: body
        size: body_size
enums:
  kind:
    0: plain
    1: special
    7: skipped

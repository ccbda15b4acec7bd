meta:
  id: varlong
  title: Zigzag-encoded signed 64-bit base-128 varint
  license: Apache-2.0
  -intrinsic: zigzag64
doc: |
  A signed 64-bit integer in zigzag encoding, written as a little-endian base-128 varint of at
  most 10 bytes (the layout of `varint`, with more room). Kafka uses it for record timestamp
  deltas in message format v2 (Kafka 0.11 and later). kafkacodec reads and writes it with its runtime routine (the `-intrinsic` key).
doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java
seq:
  - id: groups
    type: group
    repeat: until
    repeat-until: not _.has_next or _index >= 9
    doc: Groups of 7 bits, least significant first.
types:
  group:
    doc: One byte of the varint, split into its payload and continuation bit.
    seq:
      - id: b
        type: u1
        doc: One byte of the varint.
    instances:
      has_next:
        value: (b & 0x80) != 0
        doc: Bit 7 set means another byte follows.
      value:
        value: b & 0x7f
        doc: The 7 payload bits of this byte.
instances:
  unsigned:
    value: >-
      groups[0].value
      | (groups.size > 1 ? groups[1].value << 7 : 0)
      | (groups.size > 2 ? groups[2].value << 14 : 0)
      | (groups.size > 3 ? groups[3].value << 21 : 0)
      | (groups.size > 4 ? groups[4].value << 28 : 0)
      | (groups.size > 5 ? groups[5].value << 35 : 0)
      | (groups.size > 6 ? groups[6].value << 42 : 0)
      | (groups.size > 7 ? groups[7].value << 49 : 0)
      | (groups.size > 8 ? groups[8].value << 56 : 0)
      | (groups.size > 9 ? groups[9].value << 63 : 0)
    doc: The varint as an unsigned 64-bit number, before zigzag decoding.
  value:
    value: (unsigned >> 1) ^ -(unsigned & 1)
    doc: The signed value.

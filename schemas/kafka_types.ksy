meta:
  id: kafka_types
  title: Encodings of Kafka's generated messages
  license: Apache-2.0
  endian: be
  imports:
    - uvarint
doc: |
  The building blocks of the messages Kafka generates from its JSON specs (internal topics'
  keys and values, control records): strings and byte arrays with a signed length prefix, their
  compact forms of the flexible versions (KIP-482, Kafka 2.4; an unsigned varint of the length
  plus one, 0 for null), and the tagged-field section that ends every struct of a flexible
  version. Unknown tagged fields are kept as raw bytes, so they survive a re-encode.
doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/protocol/types/Type.java
types:
  string:
    doc: A UTF-8 string after an int16 length (STRING); Kafka rejects null here.
    seq:
      - id: length
        type: s2
        valid:
          min: 0
        -derive:
          length-of: value
        doc: Byte length of the string.
      - id: value
        type: str
        size: length
        encoding: UTF-8
        doc: The string.
  nullable_string:
    doc: A UTF-8 string after an int16 length, -1 for null (NULLABLE_STRING).
    seq:
      - id: length
        type: s2
        -derive:
          length-of: value
          if-absent: -1
        doc: Byte length of the string; -1 (any negative value) for null.
      - id: value
        type: str
        size: length
        encoding: UTF-8
        if: length >= 0
        doc: The string, or null.
  compact_string:
    doc: A UTF-8 string after an unsigned varint of its length plus one (COMPACT_STRING).
    seq:
      - id: length_plus_one
        type: uvarint
        -derive:
          length-of: value
          plus: 1
        doc: Byte length of the string plus one; 0 would be null, which Kafka rejects here.
      - id: value
        type: str
        size: length_plus_one.value - 1
        encoding: UTF-8
        doc: The string.
  compact_nullable_string:
    doc: A UTF-8 string after an unsigned varint of its length plus one, 0 for null (COMPACT_NULLABLE_STRING).
    seq:
      - id: length_plus_one
        type: uvarint
        -derive:
          length-of: value
          plus: 1
          if-absent: 0
        doc: Byte length of the string plus one; 0 for null.
      - id: value
        type: str
        size: length_plus_one.value - 1
        encoding: UTF-8
        if: length_plus_one.value > 0
        doc: The string, or null.
  bytes:
    doc: Bytes after an int32 length (BYTES).
    seq:
      - id: length
        type: s4
        valid:
          min: 0
        -derive:
          length-of: value
        doc: Number of bytes.
      - id: value
        size: length
        doc: The bytes.
  nullable_bytes:
    doc: Bytes after an int32 length, -1 for null (NULLABLE_BYTES).
    seq:
      - id: length
        type: s4
        -derive:
          length-of: value
          if-absent: -1
        doc: Number of bytes; -1 (any negative value) for null.
      - id: value
        size: length
        if: length >= 0
        doc: The bytes, or null.
  compact_bytes:
    doc: Bytes after an unsigned varint of their length plus one (COMPACT_BYTES).
    seq:
      - id: length_plus_one
        type: uvarint
        -derive:
          length-of: value
          plus: 1
        doc: Number of bytes plus one.
      - id: value
        size: length_plus_one.value - 1
        doc: The bytes.
  compact_nullable_bytes:
    doc: Bytes after an unsigned varint of their length plus one, 0 for null (COMPACT_NULLABLE_BYTES).
    seq:
      - id: length_plus_one
        type: uvarint
        -derive:
          length-of: value
          plus: 1
          if-absent: 0
        doc: Number of bytes plus one; 0 for null.
      - id: value
        size: length_plus_one.value - 1
        if: length_plus_one.value > 0
        doc: The bytes, or null.
  tagged_fields:
    doc: |
      The tagged-field section that ends every struct of a flexible version: a count, then each
      field as tag, size and bytes, in ascending tag order. Fields whose tags a version does
      not know are kept as they are.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: tagged_field
        repeat: expr
        repeat-expr: count.value
        doc: The fields, by ascending tag.
  tagged_field:
    doc: One tagged field, its value still encoded.
    seq:
      - id: tag
        type: uvarint
        doc: The field's tag, unique within its struct.
      - id: data_length
        type: uvarint
        -derive:
          length-of: data
        doc: Byte length of the value.
      - id: data
        size: data_length.value
        doc: The value, encoded as the field's type is.
  tagged_int8:
    doc: An int8 tagged field's value.
    seq:
      - id: value
        type: s1
        doc: The value.
  tagged_bool:
    doc: A boolean tagged field's value.
    seq:
      - id: value
        type: u1
        doc: 'The value: 0 false, anything else true (Kafka writes 1).'
  tagged_int16:
    doc: An int16 tagged field's value.
    seq:
      - id: value
        type: s2
        doc: The value.
  tagged_int32:
    doc: An int32 tagged field's value.
    seq:
      - id: value
        type: s4
        doc: The value.
  tagged_int64:
    doc: An int64 tagged field's value.
    seq:
      - id: value
        type: s8
        doc: The value.
  tagged_uuid:
    doc: A UUID tagged field's value (16 bytes).
    seq:
      - id: value
        size: 16
        doc: The UUID.
  compact_int32_array:
    doc: int32s after an unsigned varint of their count plus one, 0 for null (a COMPACT_ARRAY of INT32), as a tagged field holds them.
    seq:
      - id: count_plus_one
        type: uvarint
        -derive:
          count-of: items
          plus: 1
          if-absent: 0
        doc: Number of items plus one; 0 for null.
      - id: items
        type: s4
        repeat: expr
        repeat-expr: count_plus_one.value - 1
        if: count_plus_one.value > 0
        doc: The items, or null.
  compact_uuid_array:
    doc: UUIDs (16 bytes each) after an unsigned varint of their count plus one, 0 for null, as a tagged field holds them.
    seq:
      - id: count_plus_one
        type: uvarint
        -derive:
          count-of: items
          plus: 1
          if-absent: 0
        doc: Number of items plus one; 0 for null.
      - id: items
        size: 16
        repeat: expr
        repeat-expr: count_plus_one.value - 1
        if: count_plus_one.value > 0
        doc: The items, or null.

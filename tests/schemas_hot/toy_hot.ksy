# Every shape the compiled backend reads, in a format with nothing of Kafka in it: the
# differential test builds it with Cython and compares the two backends on it.
meta:
  id: toy_hot
  title: Shapes read by compiled code
  endian: le
  imports:
    - varint
    - uvarint
-hot: true
seq:
  - id: tag
    type: u8
  - id: flags
    type: s2be
    valid:
      min: -5
      max: 5000
  - id: version
    type: u1
    valid:
      any-of: [1, 2]
  - id: stamp
    type: s4
    if: version >= 2
  - id: crc
    type: u4
    -checksum:
      algorithm: crc32
      from: total_size
  - id: total_size
    type: u4
    -derive:
      length-from: label_length
  - id: label_length
    type: uvarint
    -derive:
      length-of: label
  - id: label
    type: str
    encoding: ASCII
    size: label_length.value
  - id: note
    type: plain
  - id: box_size
    type: u2
    -derive:
      length-of: box
  - id: box
    type: box
    size: box_size
    -require-eos: true
  - id: item_count
    type: varint
    -derive:
      count-of: items
  - id: items
    type: entry
    repeat: expr
    repeat-expr: item_count.value
  - id: blob_size
    type: s4
    -derive:
      length-of: blob
      if-absent: -1
  - id: blob
    size: blob_size
    if: blob_size >= 0
    -lazy: true
  - id: rest
    type: rest
    size-eos: true
types:
  plain:
    seq:
      - id: n
        type: u1
        -derive:
          length-of: text
      - id: text
        size: n
  box:
    -hot: true
    seq:
      - id: entries
        type: item
        repeat: eos
  item:
    -hot: true
    seq:
      - id: delta
        type: varint
      - id: data_length
        type: varint
        -derive:
          length-of: data
          if-absent: -1
      - id: data
        size: data_length.value
        if: data_length.value >= 0
    instances:
      at:
        value: _parent._parent.flags + delta.value
        -eager: true
  entry:
    -hot: true
    seq:
      - id: delta
        type: varint
      - id: name_length
        type: varint
        -derive:
          length-of: name
      - id: name
        type: str
        encoding: UTF-8
        size: name_length.value
    instances:
      at:
        value: _parent.flags + delta.value
        -eager: true
  rest:
    -hot: true
    seq:
      - id: tail
        size-eos: true

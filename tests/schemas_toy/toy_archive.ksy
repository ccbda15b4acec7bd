meta:
  id: toy_archive
  title: A small archive format with nothing of Kafka in it
  endian: le
doc: Files with names, kinds and checksummed bodies; exercises the compiler away from Kafka.
seq:
  - id: magic
    contents: TOY1
    doc: Fixed signature.
  - id: count
    type: u2
    -derive:
      count-of: files
    doc: Number of files.
  - id: files
    type: file
    repeat: expr
    repeat-expr: count
    doc: The files.
types:
  file:
    doc: One file.
    seq:
      - id: checksum
        type: u4
        -checksum:
          algorithm: crc32
          from: name_length
        doc: CRC-32 of the rest of the entry.
      - id: name_length
        type: u1
        -derive:
          length-of: name
        doc: Name length.
      - id: name
        type: str
        encoding: ASCII
        size: name_length
        doc: Name.
      - id: kind
        type: u1
        enum: kind
        doc: What the body holds.
      - id: body_size
        type: u4be
        -derive:
          length-of: body
        doc: Body length, big-endian for a change.
      - id: body
        size: body_size
        doc: Body.
    instances:
      is_text:
        value: kind == kind::text
        doc: Whether the body is text.
enums:
  kind:
    0: text
    1: binary

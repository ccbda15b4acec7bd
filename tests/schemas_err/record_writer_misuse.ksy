# A -record-writer packs a -hot type's _pack values, all of them in their order, from numbers and
# objects of the records: its params fit 64 signed bits and are named apart from its fields, and
# its `largest` is a number field.
# error 14:3: /-record-writer: error: -record-writer largest: 'key' is not a number field
# error 14:3: /-record-writer: error: -record-writer pack: the values of 'record_writer_misuse' are stamp, key, in that order
# error 15:7: /-record-writer/params/0: error: a -record-writer param is held in 64 signed bits: u8 is too wide
# error 17:7: /-record-writer/params/1: error: a -record-writer param named 'key' would hide the field
# error 41:7: /types/cold/-record-writer: error: -record-writer packs a -hot type only
meta:
  id: record_writer_misuse
  endian: be
-hot: true
-record-writer:
  params:
    - id: wide
      type: u8
    - id: key
      type: s8
  fields:
    key: ~
    stamp: -1
  largest: key
  pack:
    key: key
    stamp: stamp
seq:
  - id: stamp
    type: s8
  - id: key_length
    type: s4
    -derive:
      length-of: key
  - id: key
    size: key_length
types:
  cold:
    seq:
      - id: x
        type: u1
    -record-writer:
      fields:
        x: 0
      pack:
        x: x

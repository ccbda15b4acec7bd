# A -hot type with a field compiled code does not read is refused at the field, type by type.
# error 22:9: /types/row/seq/0: error: type 'row' is -hot, but field 'ratio' is a float
# error 27:9: /types/cells/seq/0: error: type 'cells' is -hot, but repeated field 'cells' is not a repeat of a struct type
# error 34:9: /types/tagged/seq/0: error: type 'tagged' is -hot, but field 'tag' has an enum
# error 43:9: /types/versioned/params/0: error: type 'versioned' is -hot, but it has params
# error 51:9: /types/passing/seq/0: error: type 'passing' is -hot, but field 'inner' passes params
meta:
  id: hot_misuse
  endian: be
-hot: true
seq:
  - id: n
    type: u2
  - id: rows
    type: row
    repeat: expr
    repeat-expr: n
types:
  row:
    -hot: true
    seq:
      - id: ratio
        type: f4
  cells:
    -hot: true
    seq:
      - id: cells
        type: u1
        repeat: expr
        repeat-expr: 3
  tagged:
    -hot: true
    seq:
      - id: tag
        type: u1
        enum: kind
    enums:
      kind:
        1: one
  versioned:
    -hot: true
    params:
      - id: level
        type: u1
    seq:
      - id: x
        type: u1
  passing:
    -hot: true
    seq:
      - id: inner
        type: plain(1)
  plain:
    params:
      - id: level
        type: u1
    seq:
      - id: x
        type: u1

# A -hot type with a field compiled code does not read is refused at the field, type by type.
# error 20:9: /types/row/seq/0: error: type 'row' is -hot, but field 'ratio' is a float
# error 25:9: /types/cells/seq/0: error: type 'cells' is -hot, but repeated field 'cells' is not a repeat of a struct type
# error 32:9: /types/tagged/seq/0: error: type 'tagged' is -hot, but field 'tag' has an enum
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

# A -columnar type whose fields cannot be read column by column is refused field by field.
# error 21:9: /types/row/seq/1: error: type 'row' is -columnar, but field 'name' is not sized by an earlier integer field
# error 23:9: /types/row/seq/2: error: type 'row' is -columnar, but field 'flags' has process, -lazy, contents, -checksum or valid
# error 26:9: /types/row/seq/3: error: type 'row' is -columnar, but field 'ratio' is not an integer
# error 28:9: /types/row/seq/4: error: type 'row' is -columnar, but field 'cells' is a repeated, conditional or sized number
# error 35:9: /types/versioned/params/0: error: type 'versioned' is -columnar, but it has params
meta:
  id: columnar_misuse
  endian: be
seq:
  - id: rows
    type: row
    repeat: expr
    repeat-expr: 2
types:
  row:
    -columnar: true
    seq:
      - id: n
        type: u2
      - id: name
        size: n * 2
      - id: flags
        type: u1
        valid: 1
      - id: ratio
        type: f4
      - id: cells
        type: u1
        repeat: expr
        repeat-expr: 3
  versioned:
    -columnar: true
    params:
      - id: level
        type: u1
    seq:
      - id: x
        type: u1

# A -record view is read from a -hot schema root's slots: its params fit 64 signed bits and are
# named apart from the fields, its fields are not Python keywords, a new empty list is YAML's []
# (not an expression), and a nested type has none.
# error 14:3: /-record: error: -record field 'class' is a Python keyword
# error 15:7: /-record/params/0: error: a -record param is held in 64 signed bits: u8 is too wide
# error 17:7: /-record/params/1: error: a -record param named 'n' would hide the field
# error 22:14: /-record/fields/nothing: error: bad expression '[]': unexpected '[' (at character 1)
# error 34:7: /types/part/-record: error: -record is read from a -hot schema root only
meta:
  id: record_misuse
  endian: be
-hot: true
-record:
  params:
    - id: wide
      type: u8
    - id: n
      type: s4
  fields:
    n: n
    class: part.x
    nothing: "[]"
seq:
  - id: n
    type: u2
  - id: part
    type: part
types:
  part:
    seq:
      - id: x
        type: u1
    -record:
      fields:
        x: x

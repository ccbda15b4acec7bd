# A -record view is read from a -hot schema root's slots: its params fit 64 signed bits, a new
# empty list is YAML's [] (not an expression), and a nested type has none.
# error 12:7: /-record/params/0: error: a -record param is held in 64 signed bits: u8 is too wide
# error 17:14: /-record/fields/nothing: error: bad expression '[]': unexpected '[' (at character 1)
# error 29:7: /types/part/-record: error: -record is read from a -hot schema root only
meta:
  id: record_misuse
  endian: be
-hot: true
-record:
  params:
    - id: wide
      type: u8
  fields:
    n: n
    inner: part.x
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

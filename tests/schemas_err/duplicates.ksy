# Duplicate YAML keys and duplicate field ids are errors, never "last one wins".
# error 11:5: /seq/0/type: error: duplicate key 'type'
# error 12:9: /seq/1/id: error: duplicate field id 'a'
# error 17:8: /enums/e/1: error: duplicate enum value id 'x'
meta:
  id: duplicates
  endian: be
seq:
  - id: a
    type: u1
    type: u2
  - id: a
    type: u4
enums:
  e:
    0: x
    1: x

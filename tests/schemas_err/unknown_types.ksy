# Unknown types and enums stop the run after resolution, and say how to fix an import.
# error 10:11: /seq/0/type: error: unknown type 'recrod'
# error 12:11: /seq/1/type: error: unknown type 'varint'
# error 15:11: /seq/2/enum: error: unknown enum 'colour'
meta:
  id: unknown_types
  endian: be
seq:
  - id: header
    type: recrod
  - id: count
    type: varint
  - id: code
    type: u1
    enum: colour
types:
  record:
    seq:
      - id: x
        type: u1

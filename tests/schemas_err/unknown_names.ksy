# Names in expressions are resolved in the type where they stand.
# error 14:11: /seq/2/size: error: unknown name 'ken_length' in type 'unknown_names' (at character 1 of the expression)
# error 17:9: /seq/3/if: error: enum 'color' has no value 'purple' (at character 9 of the expression)
# error 20:12: /instances/double/value: error: unknown name 'missing' in type 'unknown_names' (at character 18 of the expression)
meta:
  id: unknown_names
  endian: be
seq:
  - id: kind
    type: u1
  - id: key_length
    type: s4
  - id: key
    size: ken_length
  - id: value
    size: 4
    if: kind == color::purple
instances:
  double:
    value: key_length * 2 + missing
enums:
  color:
    0: red
    1: green

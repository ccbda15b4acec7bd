# The id must match the file name, multi-byte integers need an endianness, names are snake_case.
# error 8:7: /meta/id: error: meta/id 'other_name' must match the file name 'wrong_meta' (imports find files by id)
# error 10:9: /seq/0/id: error: field id 'CamelCase' must be lower_snake_case (a-z, 0-9, _)
# error 13:11: /seq/1/type: error: type 'u4' needs an endianness: set meta/endian or write u4be
# error 15:11: /seq/2/type: error: a 'str' field needs 'encoding'
# error 15:11: /seq/2/type: error: a 'str' field needs 'size' or 'size-eos'
meta:
  id: other_name
seq:
  - id: CamelCase
    type: u4
  - id: fine
    type: u4
  - id: sized
    type: str

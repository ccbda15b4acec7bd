# A -record view's fields are numbers and bytes of the fields read flat (not a struct), and its
# checksum a crc32 field of them.
# error 10:3: /-record: error: -record checksum: a crc32 field of the fields read flat
# error 10:3: /-record: error: -record field 'whole': only numbers and bytes of the fields read flat and the view's params
meta:
  id: record_refused
  endian: be
-hot: true
-record:
  params:
    - id: bias
      type: s4
  checksum: n
  fields:
    n: n + bias
    whole: part
    inner: part.x
seq:
  - id: n
    type: u2
  - id: part
    type: part
  - id: body
    size: n
types:
  part:
    seq:
      - id: x
        type: u1

# A misspelt key and a misspelt extension are both reported, not ignored.
# error 9:5: /seq/0: error: a field without 'type' needs 'size' or 'size-eos'
# error 10:11: /seq/0/tpye: error: unknown key 'tpye'
# error 14:7: /seq/1/-deriv: error: unknown extension key '-deriv'
meta:
  id: unknown_keys
  endian: be
seq:
  - id: length
    tpye: u4
  - id: body
    size: length
    -deriv:
      length-of: body

# The -prefixed extensions check what they point at.
# error 17:7: /seq/1/-derive: error: length-of: field 'body' must come after 'body_length'
# error 21:7: /seq/2/-derive: error: count-of needs a repeated field
# error 22:5: /seq/3: error: a crc32c checksum needs a 4-byte field
# error 25:7: /seq/3/-checksum: error: checksum from: no field 'nowhere' in type 'extension_misuse'
# error 30:7: /seq/4/-checksum: error: unknown checksum algorithm 'adler32'; known: crc32, crc32c
# error 32:5: /seq/5: error: '-lazy' fields cannot have 'repeat'
meta:
  id: extension_misuse
  endian: be
seq:
  - id: body
    size: 4
  - id: body_length
    type: u4
    -derive:
      length-of: body
  - id: count
    type: u2
    -derive:
      count-of: body
  - id: crc
    type: u2
    -checksum:
      algorithm: crc32c
      from: nowhere
  - id: sum
    type: u4
    -checksum:
      algorithm: adler32
      from: tail
  - id: tail
    size-eos: true
    -lazy: true
    repeat: eos

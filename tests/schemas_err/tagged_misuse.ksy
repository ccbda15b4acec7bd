# error 21:9: /seq/1/-tagged/0: error: tagged field 'count' has the name of another field
# error 23:9: /seq/1/-tagged/1: error: tagged field 'size' would hide the generated size()
# error 25:9: /seq/1/-tagged/2: error: after: no field 'nowhere' before 'first'
# error 25:9: /seq/1/-tagged/2: error: tag 0 is named twice
# error 28:9: /seq/1/-tagged/3: error: -tagged: tag 2 needs a case of 'data' whose type holds one field
# error 30:9: /seq/1/-tagged/4: error: -tagged: tag 9 needs a case of 'data' whose type holds one field
# error 32:9: /seq/1/-tagged/5: error: a -tagged entry needs an 'id' and a 'tag' (an integer, 0 or more)
# error 38:9: /seq/2/-tagged/0: error: -tagged needs a section type with a repeated field 'fields' whose items have 'tag' and 'data'
# -tagged names the fields of a tagged-field section: on a section type (a repeated `fields` of
# items with `tag` and `data`), each tag a case of `data` whose type holds one field, each name
# new, each `after` a field before it, each tag named once.
meta:
  id: tagged_misuse
  endian: be
seq:
  - id: count
    type: u1
  - id: tags
    type: section
    -tagged:
      - id: count
        tag: 0
      - id: size
        tag: 1
      - id: first
        tag: 0
        after: nowhere
      - id: wide
        tag: 2
      - id: unknown
        tag: 9
      - id: broken
        tag: -1
        default: "x"
  - id: plain
    type: u1
    -tagged:
      - id: other
        tag: 0
types:
  section:
    seq:
      - id: n
        type: u1
      - id: fields
        type: field
        repeat: expr
        repeat-expr: n
  field:
    seq:
      - id: tag
        type: u1
      - id: len
        type: u1
      - id: data
        size: len
        type:
          switch-on: tag
          cases:
            0: one
            1: one
            2: two
  one:
    seq:
      - id: value
        type: s4
  two:
    seq:
      - id: a
        type: s4
      - id: b
        type: s4

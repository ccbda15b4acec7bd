# error 33:9: /seq/3/-tagged/0: error: tagged field 'count' has the name of another field
# error 35:9: /seq/3/-tagged/1: error: tagged field 'size' would hide the generated size()
# error 37:9: /seq/3/-tagged/2: error: after: no field 'nowhere' stored before the section, nor a tagged field before 'first'
# error 37:9: /seq/3/-tagged/2: error: tag 0 is named twice
# error 40:9: /seq/3/-tagged/3: error: -tagged: tag 2 needs a case of 'data' whose type holds one field
# error 42:9: /seq/3/-tagged/4: error: -tagged: tag 9 needs a case of 'data' whose type holds one field
# error 44:9: /seq/3/-tagged/5: error: a -tagged entry needs an 'id' and a 'tag' (an integer, 0 or more)
# error 47:9: /seq/3/-tagged/6: error: after: no field 'n_count' stored before the section, nor a tagged field before 'on_derived'
# error 50:9: /seq/3/-tagged/7: error: after: no field 'plain' stored before the section, nor a tagged field before 'on_later'
# error 53:9: /seq/3/-tagged/8: error: if: a tagged field's condition may name only the type's params
# error 59:9: /seq/4/-tagged/0: error: -tagged needs a section type with a repeated field 'fields' whose items have 'tag' and 'data'
# -tagged names the fields of a tagged-field section: on a section type (a repeated `fields` of
# items with `tag` and `data`), each tag a case of `data` whose type holds one field, each name
# new, each `after` a field stored before the section (or an earlier tagged one), each tag named
# once, each condition on the params alone.
meta:
  id: tagged_misuse
  endian: be
seq:
  - id: count
    type: u1
  - id: n_count
    type: u1
    -derive:
      count-of: extra
  - id: extra
    type: u1
    repeat: expr
    repeat-expr: n_count
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
      - id: on_derived
        tag: 3
        after: n_count
      - id: on_later
        tag: 4
        after: plain
      - id: on_field
        tag: 5
        if: count > 0
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
            3: one
            4: one
            5: one
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

# Params: a user passes as many as its type takes, every case of a switch takes the same ones
# when one does, and a param is an integer whose name is no field's, builtin or generated name.
# error 20:11: /seq/1/type: error: type 'versioned' takes 2 params, not 0
# error 28:12: /seq/3/type/cases/0: error: type 'versioned' takes 2 params, not 1
# error 29:12: /seq/3/type/cases/1: error: the cases of a switch whose types take params must all take the same ones
# error 29:12: /seq/3/type/cases/1: error: type 'versioned' takes 2 params, not 1
# error 36:12: /seq/4/type/cases/1: error: the cases of a switch whose types take params must all take the same ones
# error 44:13: /types/shadowing/params/0/id: error: param id 'len' is a Python builtin or keyword, or a name the generated code uses; choose another
# error 46:13: /types/shadowing/params/1/id: error: param id 'f_x' is a Python builtin or keyword, or a name the generated code uses; choose another
# error 55:13: /types/versioned/params/1/id: error: param id 'pos' is a Python builtin or keyword, or a name the generated code uses; choose another
# error 57:9: /types/versioned/params/2: error: a param's type must be an integer: u1, u2, u4, u8, s1, s2, s4 or s8
# error 59:9: /types/versioned/params/3: error: param 'tag' has the name of a field or instance
meta:
  id: params_misuse
  endian: be
seq:
  - id: kind
    type: u1
  - id: one
    type: versioned
  - id: two
    type: versioned(kind, 1)
  - id: three
    size: 4
    type:
      switch-on: kind
      cases:
        0: versioned(kind)
        1: versioned(kind + 1)
  - id: four
    size: 4
    type:
      switch-on: kind
      cases:
        0: versioned(kind, kind)
        1: plain
types:
  plain:
    seq:
      - id: x
        type: u1
  shadowing:
    params:
      - id: len
        type: u1
      - id: f_x
        type: u1
    seq:
      - id: y
        type: u1
  versioned:
    params:
      - id: kind
        type: u2
      - id: pos
        type: u2
      - id: ratio
        type: f4
      - id: tag
        type: u1
    seq:
      - id: tag
        type: u1
      - id: more
        type: u1
        if: kind >= 1
  hot_one:
    -hot: true
    params:
      - id: level
        type: u1
    seq:
      - id: x
        type: u1

meta:
  id: versioned
  endian: be
doc: A message framed by its kind and version, whose body type takes the version as a param.
seq:
  - id: kind
    type: u1
  - id: version
    type: u1
  - id: body
    size-eos: true
    type:
      switch-on: 'version < 100 ? kind * 100 + version : -1'
      cases:
        0: thing(version)
        1: thing(version)
        2: thing(version)
        100: other(version)
        200: counted(version)
    doc: The body of that kind and version; raw bytes for one this schema does not know.
types:
  thing:
    params:
      - id: version
        type: u2
        doc: Version of the thing.
    seq:
      - id: a
        type: s4
      - id: b
        type: s2
        if: version >= 1
        doc: Since version 1.
      - id: items_count
        type: u1
        -derive:
          count-of: items
        if: version >= 1
      - id: items
        type: item(version)
        repeat: expr
        repeat-expr: items_count
        if: version >= 1
  item:
    params:
      - id: version
        type: u2
    seq:
      - id: x
        type: u1
      - id: y
        type: u1
        if: version >= 2
  other:
    params:
      - id: version
        type: u2
    seq:
      - id: z
        type: u4
  counted:
    doc: Passes a derived field (a count) as a param.
    params:
      - id: version
        type: u2
    seq:
      - id: n
        type: u1
        -derive:
          count-of: cells
      - id: cells
        type: cell(n)
        repeat: expr
        repeat-expr: n
  cell:
    params:
      - id: of
        type: u1
    seq:
      - id: x
        type: u1
      - id: y
        type: u1
        if: of >= 2

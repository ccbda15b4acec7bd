# Expression syntax errors say where in the expression they are.
# error 11:11: /seq/1/size: error: bad expression 'n +': unexpected 'end of expression' (at character 4)
# error 13:11: /seq/2/size: error: bad expression '(n * 2': expected ')', found 'end of expression' (at character 7)
meta:
  id: bad_expression
  endian: be
seq:
  - id: n
    type: u2
  - id: data
    size: n +
  - id: more
    size: (n * 2

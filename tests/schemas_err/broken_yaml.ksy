# Invalid YAML is reported at the position the YAML parser gives.
# error 8:1: /: error: invalid YAML: expected ',' or ']', but got '<stream end>'
meta:
  id: broken_yaml
seq:
  - id: a
    type: [u1

# An import that names no schema in the folder.
# error 7:5: /meta/imports: error: imported schema 'no_such_schema' has no file no_such_schema.ksy beside this schema
meta:
  id: missing_import
  endian: be
  imports:
    - no_such_schema
seq:
  - id: a
    type: u1

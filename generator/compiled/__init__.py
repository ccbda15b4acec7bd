"""The Cython target: the compiled module of a schema's -hot types (module.py), their writers
(pack.py), and the columnar readers and writers of its -columnar types (columns.py,
pack_columns.py)."""

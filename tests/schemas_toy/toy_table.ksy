meta:
  id: toy_table
  title: A table of rows, read by columns; nothing of Kafka in it
  endian: le
doc: Rows of fixed-width numbers, an optional label and a few cells each.
seq:
  - id: count
    type: u4
    -derive:
      count-of: rows
    doc: Number of rows.
  - id: rows
    type: row
    repeat: expr
    repeat-expr: count
    doc: The rows.
types:
  row:
    doc: One row.
    -columnar: true
    seq:
      - id: id
        type: u2
        doc: Row id.
      - id: delta
        type: s4
        doc: A signed number.
      - id: stamp
        type: s8be
        doc: A big-endian 64-bit number.
      - id: label_length
        type: s2
        -derive:
          length-of: label
          if-absent: -1
        doc: Label length, -1 without a label.
      - id: label
        type: str
        encoding: UTF-8
        size: label_length
        if: label_length >= 0
        doc: Label.
      - id: cell_count
        type: u1
        -derive:
          count-of: cells
        doc: Number of cells.
      - id: cells
        type: cell
        repeat: expr
        repeat-expr: cell_count
        doc: The cells.
  cell:
    doc: One cell.
    seq:
      - id: tag
        type: s1
        doc: Tag.
      - id: weight
        type: s2be
        doc: Weight.

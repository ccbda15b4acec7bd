"""The schema model: frozen dataclasses, each node keeping its file, YAML path, line and column.

Identity, not value, is what distinguishes nodes (eq=False), so passes can key side tables on them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .expr import Expr
from .source import Loc

PRIMITIVES = {  # Kaitai name -> (struct code, byte width, signed)
    "u1": ("B", 1, False), "u2": ("H", 2, False), "u4": ("I", 4, False), "u8": ("Q", 8, False),
    "s1": ("b", 1, True), "s2": ("h", 2, True), "s4": ("i", 4, True), "s8": ("q", 8, True),
    "f4": ("f", 4, True), "f8": ("d", 8, True),
}

INTRINSICS = {  # -intrinsic name -> runtime reader/writer family, used for inline code
    "zigzag32": "zigzag32",
    "zigzag64": "zigzag64",
    "uvarint32": "uvarint32",
}
# Facts the generated code and the runtime share (a test holds them equal to the runtime's):
# the longest encoding of each varint, and the values the runtime's varint tables hold.
VARINT_MAX = {"zigzag32": 5, "zigzag64": 10, "uvarint32": 5}
VARINT_TABLE_LIMIT = 0x4000


@dataclass(frozen=True, eq=False)
class EnumValue:
    value: int
    id: str
    doc: str | None
    loc: Loc


@dataclass(frozen=True, eq=False)
class EnumSpec:
    name: str
    values: tuple[EnumValue, ...]
    loc: Loc


class RefKind(Enum):
    """What a field's `type:` is: a fixed-width number, raw bytes, text, a type of the schemas
    (a struct or an intrinsic such as a varint), or a switch between such types."""
    PRIM = "prim"
    BYTES = "bytes"
    STR = "str"
    USER = "user"
    SWITCH = "switch"


class DeriveKind(Enum):
    """How `-derive` computes a field on write: the size of a sibling field, the bytes from a
    sibling field to the end, or a count."""
    LENGTH_OF = "length-of"
    LENGTH_FROM = "length-from"
    COUNT_OF = "count-of"


@dataclass(frozen=True, eq=False)
class TypeRef:
    """What a field's `type:` (with `size`, `encoding`) denotes before resolution."""
    kind: RefKind
    loc: Loc
    prim: str | None = None  # e.g. "s4"
    endian: str | None = None  # "be" | "le"
    name: str | None = None  # user type name as written
    switch_on: Expr | None = None
    cases: tuple[tuple[Expr, "TypeRef"], ...] = ()
    encoding: str | None = None
    args: tuple[Expr, ...] = ()  # a user type's parameters, as `name(arg, ...)` gives them


@dataclass(frozen=True, eq=False)
class Param:
    """A type's parameter (Kaitai `params`): a number its user passes when reading it, kept on
    the object, and passed again by the user's writer."""
    id: str
    prim: str  # an integer primitive, e.g. "u2"
    loc: Loc
    doc: str | None = None


@dataclass(frozen=True, eq=False)
class Valid:
    loc: Loc
    eq: Expr | None = None
    min: Expr | None = None
    max: Expr | None = None
    any_of: tuple[Expr, ...] = ()


@dataclass(frozen=True, eq=False)
class Derive:
    """-derive: a field computed on write from others (a length, a byte span or a count)."""
    kind: DeriveKind
    target: str | Expr  # a sibling field id, or an expression for count-of
    loc: Loc
    if_absent: int | None = None
    plus: int = 0  # added to the length or count (Kafka's compact encodings store N+1)


@dataclass(frozen=True, eq=False)
class Checksum:
    algorithm: str
    from_field: str
    loc: Loc


@dataclass(frozen=True, eq=False)
class Process:
    name: str
    args: tuple[Expr, ...]
    loc: Loc


@dataclass(frozen=True, eq=False)
class JsonAs:
    """-json: how Kafka's JSON shows a field that its name or representation alone does not tell:
    its name where camel-casing the id does not give it, and `as` bool (a byte) or uuid (16 bytes)."""
    loc: Loc
    name: str | None = None
    as_: str | None = None


@dataclass(frozen=True, eq=False)
class Tagged:
    """-tagged: a field a message keeps in its tagged-field section (Kafka's KIP-482) rather than
    in its seq, named, with the value a message without it has and its place in the message's
    order of fields (after `after`, a field or an earlier tagged field; last without it)."""
    id: str
    tag: int
    default: object  # an int, None, or () for an empty list
    loc: Loc
    after: str | None = None
    doc: str | None = None
    json: JsonAs | None = None
    if_: Expr | None = None  # the versions that define the tag, as a condition on the params


@dataclass(frozen=True, eq=False)
class Attr:
    id: str
    loc: Loc
    type: TypeRef
    size: Expr | None = None
    size_eos: bool = False
    if_: Expr | None = None
    repeat: str | None = None  # "expr" | "eos" | "until"
    repeat_expr: Expr | None = None
    repeat_until: Expr | None = None
    valid: Valid | None = None
    enum: str | None = None
    process: Process | None = None
    contents: bytes | None = None
    doc: str | None = None
    doc_ref: str | None = None
    derive: Derive | None = None
    checksum: Checksum | None = None
    default: Expr | None = None
    lazy: bool = False
    require_eos: bool = False
    tagged: tuple[Tagged, ...] = ()  # on a tagged-field section: the fields it holds by name
    json: JsonAs | None = None
    key_locs: dict = field(default_factory=dict)  # YAML key -> Loc of its value

    def at(self, key: str) -> Loc:
        return self.key_locs.get(key, self.loc)

    @property
    def storage(self) -> str:
        """The attribute holding the value: derived, checksum and lazy fields sit behind properties."""
        return f"_{self.id}" if (self.derive or self.checksum or self.lazy) else self.id


@dataclass(frozen=True, eq=False)
class Instance:
    id: str
    loc: Loc
    value: Expr
    enum: str | None = None
    doc: str | None = None
    doc_ref: str | None = None
    key_locs: dict = field(default_factory=dict)
    eager: bool = False  # -eager: computed while reading into a plain attribute

    def at(self, key: str) -> Loc:
        return self.key_locs.get(key, self.loc)


@dataclass(frozen=True, eq=False)
class RecordView:
    """-record: how an instance reads as a record of the code that uses it (a class with these
    fields, named when reading), for readers that make such records without the instance's
    objects (generator/record_view.py). A field is an expression over the instance's fields
    (`a.b` for a field of a struct it holds) and the view's params, or a new empty list where
    the format has no such thing."""
    loc: Loc
    params: tuple[Param, ...] = ()
    when: Expr | None = None  # instances the view takes; the others are left to the reader
    checksum: Expr | None = None  # a checksum field that must match where asked to verify
    fields: tuple[tuple[str, Expr | None], ...] = ()  # None: a new empty list
    doc: str | None = None


@dataclass(frozen=True, eq=False)
class RecordWriter:
    """-record-writer: how the records of the code that uses the schema (a class named when
    writing, with these fields, or dicts of them) are packed one after another through the
    compiled `_pack` (generator/compiled/record_writer.py). A field is an object taken as it is,
    a list (None standing for an empty one), or a number with the expression it takes where it
    is None; `when` the records it packs; `pack` gives `_pack`'s values as expressions of the
    fields, the params and `_index` (a mapping for a struct's values)."""
    loc: Loc
    params: tuple[Param, ...] = ()
    fields: tuple[tuple[str, str, Expr | None], ...] = ()  # (name, "object" | "list" | "number", default)
    when: Expr | None = None  # the records it packs; it stops at the first it does not
    pack: tuple = ()  # ((name, Expr or a nested pack), ...)
    largest: str | None = None  # a number field whose largest value a run returns
    doc: str | None = None


@dataclass(frozen=True, eq=False)
class TypeSpec:
    name: str
    loc: Loc
    seq: tuple[Attr, ...] = ()
    instances: tuple[Instance, ...] = ()
    types: tuple["TypeSpec", ...] = ()
    enums: tuple[EnumSpec, ...] = ()
    doc: str | None = None
    doc_ref: str | None = None
    intrinsic: str | None = None
    endian: str | None = None
    columnar: bool = False  # -columnar: also generate a vectorised reader of many instances
    columnar_loc: Loc | None = None
    hot: bool = False  # -hot: also generate a compiled reader (Cython)
    hot_loc: Loc | None = None
    params: tuple[Param, ...] = ()
    record: RecordView | None = None  # -record
    record_writer: RecordWriter | None = None  # -record-writer


@dataclass(frozen=True, eq=False)
class Schema:
    id: str
    file: str
    loc: Loc
    root: TypeSpec
    title: str | None = None
    imports: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)
    source_sha256: str = ""
    id_loc: Loc | None = None
    imports_loc: Loc | None = None

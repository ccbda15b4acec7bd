"""What the fast paths read, checked on the model by a pass: a `-columnar` type must be readable
field by field across instances, a `-hot` type must be made of what the compiled backend reads.
Anything else is a problem at the type's key, so a schema never silently loses its fast path.
The emitters rely on these checks and import the helpers they share from here.
"""
from __future__ import annotations

from .expr import Attribute, Binary, Int, Name
from .model import PRIMITIVES, Attr, DeriveKind, RefKind, TypeSpec

_INTEGER_CODES = set("BHIQbhiq")


def field_ref(program, expr, earlier: dict) -> str | None:
    """The earlier integer field an expression names (`n`, or `n.value` of a varint), or None."""
    if isinstance(expr, Name) and expr.name in earlier and earlier[expr.name].type.kind == RefKind.PRIM:
        return expr.name
    if (isinstance(expr, Attribute) and expr.name == "value" and isinstance(expr.obj, Name)
            and expr.obj.name in earlier and earlier[expr.obj.name].type.kind == RefKind.USER):
        target = program.resolved[earlier[expr.obj.name].type]
        return expr.obj.name if target.intrinsic else None
    return None


# -- -columnar ----------------------------------------------------------------------------------
def columnar_problems(program, spec: TypeSpec, nested: bool = False) -> list[tuple[object, str]]:
    """A type is columnar when every field is a fixed-width integer, a varint intrinsic, bytes or
    a string sized by an earlier field (optionally `if: that >= 0`), or a counted repeat of a
    columnar type that does not repeat itself; `-derive: length-from` spans are checked."""
    out = []
    if spec.params:
        out.append((spec.params[0].loc, f"type {spec.name!r} is -columnar, but it has params"))
    earlier: dict[str, Attr] = {}
    for attr in spec.seq:
        why = _not_columnar(program, attr, earlier, nested)
        if why:
            out.append((attr.loc, f"type {spec.name!r} is -columnar, but field {attr.id!r} {why}"))
        earlier[attr.id] = attr
    return out


def _not_columnar(program, attr: Attr, earlier: dict, nested: bool) -> str | None:
    if attr.process or attr.lazy or attr.contents is not None or attr.checksum or attr.valid:
        return "has process, -lazy, contents, -checksum or valid"
    if attr.derive is not None and attr.derive.kind == DeriveKind.LENGTH_FROM and attr.derive.target in earlier:
        return "is a length of earlier fields"
    kind = attr.type.kind
    if kind == RefKind.PRIM:
        if PRIMITIVES[attr.type.prim][0] not in _INTEGER_CODES:
            return "is not an integer"
        return None if not (attr.repeat or attr.if_ is not None or attr.size is not None) else \
            "is a repeated, conditional or sized number"
    if kind in (RefKind.BYTES, RefKind.STR):
        size = field_ref(program, attr.size, earlier) if attr.size is not None else None
        if size is None:
            return "is not sized by an earlier integer field"
        e = attr.if_
        if e is not None and not (isinstance(e, Binary) and e.op == ">=" and isinstance(e.right, Int)
                                  and e.right.value == 0 and field_ref(program, e.left, earlier) == size):
            return "has an `if` other than `<its size> >= 0`"
        return None
    if kind != RefKind.USER:
        return "is a switch"
    target = program.resolved[attr.type]
    if target.intrinsic:
        return None if not (attr.repeat or attr.if_ is not None) else "is a repeated or conditional varint"
    if attr.repeat != "expr" or attr.if_ is not None or attr.size is not None:
        return "is a user type that is not a plain counted repeat"
    if nested:
        return "repeats inside a repeated type"
    if field_ref(program, attr.repeat_expr, earlier) is None:
        return "is counted by something other than an earlier integer field"
    inner = columnar_problems(program, target, nested=True)
    return f"repeats a type that cannot be read by columns ({inner[0][1]})" if inner else None


# -- -hot ---------------------------------------------------------------------------------------
def hot_problem(program, spec: TypeSpec) -> tuple[object, str] | None:
    """The first field (or eager instance) of a hot type that compiled code does not read, with
    why."""
    if spec.params:
        return spec.params[0].loc, f"type {spec.name!r} is -hot, but it has params"
    for attr in spec.seq:
        why = _not_hot(program, attr)
        if why is not None:
            return attr.loc, f"type {spec.name!r} is -hot, but {why}"
    for inst in spec.instances:
        if inst.eager and program.enum_of.get(inst) is not None:
            return inst.loc, f"type {spec.name!r} is -hot, but eager instance {inst.id!r} has an enum"
    return None


def _not_hot(program, attr: Attr) -> str | None:
    ref = attr.type
    target = program.resolved.get(ref) if ref.kind == RefKind.USER else None
    if ref.args:
        return f"field {attr.id!r} passes params"
    if program.enum_of.get(attr) is not None:
        return f"field {attr.id!r} has an enum"
    if attr.contents is not None:
        return f"field {attr.id!r} has fixed contents"
    if attr.lazy:
        return None  # its bytes are kept whatever they hold
    if attr.process is not None:
        return f"field {attr.id!r} is processed ({attr.process.name}) and not lazy"
    if attr.repeat:
        if target is None or target.intrinsic or attr.size is not None or attr.size_eos:
            return f"repeated field {attr.id!r} is not a repeat of a struct type"
        if attr.repeat == "until":
            return f"field {attr.id!r} repeats until a condition"
        return None
    if ref.kind == RefKind.PRIM:
        return f"field {attr.id!r} is a float" if ref.prim.startswith("f") else None
    if target is not None and target.intrinsic and (attr.size is not None or attr.size_eos):
        return f"varint field {attr.id!r} is sized"
    if ref.kind == RefKind.SWITCH:
        return f"field {attr.id!r} switches between types"
    return None

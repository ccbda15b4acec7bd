"""Ordered passes over the program; each adds problems. Later passes run only on a clean resolve."""
from __future__ import annotations

import keyword

from . import expr as ex
from .expr import names_in, same_expr
from .model import PRIMITIVES, Attr, DeriveKind, RefKind, TypeSpec
from .program import Program
from .pyexpr import INT, WRITER_FIELD_TYPES, Scope, T, Translator
from .shapes import columnar_problems, hot_problem

CHECKSUM_ALGORITHMS = {"crc32": 4, "crc32c": 4}  # name -> width in bytes
# names of the generated classes' own members, which a field or instance would hide
GENERATED_MEMBERS = {"size", "read", "from_bytes", "to_bytes", "to_dict"}


def index(program: Program, problems) -> None:
    """Record owning schema and lexical parent of every type; catch name clashes."""
    for schema in program.schemas.values():
        stack = [(schema.root, None)]
        while stack:
            spec, parent = stack.pop()
            program.schema_of[spec] = schema
            program.lexical_parent[spec] = parent
            for enum in spec.enums:
                program.enum_owner[enum] = spec
            seen = {a.id for a in spec.seq}
            for param in spec.params:
                if param.id in seen or any(i.id == param.id for i in spec.instances):
                    problems.add(param.loc, f"param {param.id!r} has the name of a field or instance")
            for node in (*spec.seq, *spec.params, *spec.instances):
                if node.id in GENERATED_MEMBERS:
                    problems.add(node.loc, f"{node.id!r} is the name of a method of generated classes; "
                                           "choose another name")
            for inst in spec.instances:
                if inst.id in seen:
                    problems.add(inst.loc, f"instance {inst.id!r} has the name of a field")
            for sub in spec.types:
                stack.append((sub, spec))


def resolve(program: Program, problems) -> None:
    """Resolve every user type name and enum name."""
    for spec in program.all_types():
        for attr in spec.seq:
            refs = [attr.type] + [t for _, t in attr.type.cases]
            for ref in refs:
                if ref.kind != RefKind.USER:
                    continue
                found = program.lookup_type(ref.name, spec)
                if found is None:
                    problems.add(ref.loc, f"unknown type {ref.name!r}"
                                 + _import_hint(program, spec, ref.name))
                else:
                    program.resolved[ref] = found
                    if len(ref.args) != len(found.params):
                        problems.add(ref.loc, f"type {ref.name!r} takes {len(found.params)} params, "
                                              f"not {len(ref.args)}")
            if attr.type.kind == RefKind.SWITCH:
                _same_args(program, problems, attr.type)
            if attr.enum:
                _resolve_enum(program, problems, spec, attr, attr.enum)
        for inst in spec.instances:
            if inst.enum:
                _resolve_enum(program, problems, spec, inst, inst.enum)


def _same_args(program, problems, ref) -> None:
    """Where a case of a switch takes params, every case takes the same ones: a writer passes
    them to whichever case its value is."""
    cases = [t for _, t in ref.cases if (found := program.resolved.get(t)) is not None and not found.intrinsic]
    if not any(program.resolved[t].params for t in cases):
        return
    for case in cases[1:]:
        if len(case.args) != len(cases[0].args) or not all(map(same_expr, case.args, cases[0].args)):
            problems.add(case.loc, "the cases of a switch whose types take params must all take the same ones")
            return


def _import_hint(program, spec, name) -> str:
    schema = program.schema_of[spec]
    if name in program.schemas and name not in schema.imports:
        return f" (add {name!r} to meta/imports)"
    return ""


def _resolve_enum(program, problems, spec, node, name):
    enum = program.lookup_enum(name, spec)
    if enum is None:
        problems.add(node.at("enum"), f"unknown enum {name!r}")
    else:
        program.enum_of[node] = enum


def parents(program: Program, problems) -> None:
    """Which types use which as fields: decides what `_parent` means in each type."""
    for spec in program.all_types():
        for attr in spec.seq:
            for ref in [attr.type] + [t for _, t in attr.type.cases]:
                target = program.resolved.get(ref)
                if target is not None and not target.intrinsic:
                    program.users.setdefault(target, set()).add(spec)


def extensions(program: Program, problems) -> None:
    """Check the -prefixed keys and the field options they depend on."""
    for spec in program.all_types():
        if spec.intrinsic:
            continue
        ids = [a.id for a in spec.seq]
        for i, attr in enumerate(spec.seq):
            _check_field(program, problems, spec, ids, i, attr)


def _is_int_field(program, attr: Attr) -> bool:
    ref = attr.type
    if attr.repeat:
        return False
    if ref.kind == RefKind.PRIM:
        return not ref.prim.startswith("f")
    if ref.kind == RefKind.USER:
        target = program.resolved.get(ref)
        return bool(target and target.intrinsic)
    return False


def _check_field(program, problems, spec: TypeSpec, ids, i, attr: Attr):
    d = attr.derive
    if attr.process or attr.lazy or attr.require_eos:
        for key, on in (("process", attr.process), ("-lazy", attr.lazy), ("-require-eos", attr.require_eos)):
            if on and attr.size is None and not attr.size_eos:
                problems.add(attr.loc, f"'{key}' needs 'size' or 'size-eos' on the same field")
    if attr.lazy and attr.repeat:
        problems.add(attr.loc, "'-lazy' fields cannot have 'repeat'")
    if d is not None or attr.checksum is not None:
        if not _is_int_field(program, attr):
            problems.add(attr.loc, "a derived or checksum field must be a single integer field")
        if attr.default is not None:
            problems.add(attr.loc, "a derived field cannot also have '-default'")
    if d is not None and d.kind in (DeriveKind.LENGTH_OF, DeriveKind.LENGTH_FROM):
        target = d.target
        if target not in ids:
            problems.add(d.loc, f"{d.kind.value}: no field {target!r} in type {spec.name!r}")
        elif ids.index(target) <= i:
            problems.add(d.loc, f"{d.kind.value}: field {target!r} must come after {attr.id!r}")
        elif d.kind == DeriveKind.LENGTH_OF:
            tattr = spec.seq[ids.index(target)]
            if tattr.repeat:
                problems.add(d.loc, f"length-of: {target!r} is repeated; use count-of for a count")
            if d.if_absent is None and tattr.if_ is not None:
                problems.add(d.loc, f"length-of: {target!r} is conditional; say what to write when it "
                                    "is absent with 'if-absent'")
    if d is not None and d.kind == DeriveKind.LENGTH_FROM and attr.type.kind == RefKind.USER:
        # A varint prefix is patched in last and may change size then; a checksum or fixed-width
        # length-from whose span starts at or before it would be computed over the placeholder.
        for other in spec.seq:
            start = (other.checksum.from_field if other.checksum else
                     other.derive.target if other.derive and other.derive.kind == DeriveKind.LENGTH_FROM else None)
            if other is not attr and start is not None and start in ids and ids.index(start) <= ids.index(d.target):
                problems.add(d.loc, f"length-from on a varint cannot nest inside the span of {other.id!r}")
    c = attr.checksum
    if c is not None:
        if c.algorithm not in CHECKSUM_ALGORITHMS:
            problems.add(c.loc, f"unknown checksum algorithm {c.algorithm!r}; known: "
                                f"{', '.join(sorted(CHECKSUM_ALGORITHMS))}")
        elif attr.type.kind == RefKind.PRIM and PRIMITIVES[attr.type.prim][1] != CHECKSUM_ALGORITHMS[c.algorithm]:
            problems.add(attr.loc, f"a {c.algorithm} checksum needs a "
                                   f"{CHECKSUM_ALGORITHMS[c.algorithm]}-byte field")
        if attr.type.kind != RefKind.PRIM:
            problems.add(attr.loc, "a checksum field must be a fixed-width integer")
        if c.from_field not in ids:
            problems.add(c.loc, f"checksum from: no field {c.from_field!r} in type {spec.name!r}")
        elif ids.index(c.from_field) <= i:
            problems.add(c.loc, f"checksum from: field {c.from_field!r} must come after {attr.id!r}")
    if attr.size is not None and attr.size_eos:
        problems.add(attr.loc, "'size' and 'size-eos' exclude each other")
    if attr.contents is not None and attr.type.kind != RefKind.BYTES:
        problems.add(attr.loc, "'contents' cannot have a 'type'")
    if attr.tagged:
        _check_tagged(program, problems, spec, attr)
    if attr.json is not None and attr.json.as_ is not None:
        t = attr.type
        fits = (t.kind == RefKind.PRIM and not t.prim.startswith("f") if attr.json.as_ == "bool" else
                t.kind == RefKind.BYTES and isinstance(attr.size, ex.Int) and attr.size.value == 16)
        if not fits:
            problems.add(attr.at("-json"), f"-json as: {attr.json.as_} needs "
                                           f"{'an integer field' if attr.json.as_ == 'bool' else 'a field of size 16'}")
    if attr.type.kind == RefKind.SWITCH:
        sized = attr.size is not None or attr.size_eos
        has_default = any(k is None for k, _ in attr.type.cases)
        if not sized and not has_default:
            problems.add(attr.type.loc, "a switch without a default case ('_') needs 'size'")


def _check_tagged(program, problems, spec: TypeSpec, attr: Attr) -> None:
    if spec.hot:
        problems.add(attr.at("-tagged"), "-tagged is not for -hot types")
    names = {a.id for a in spec.seq} | {p.id for p in spec.params} | {i.id for i in spec.instances}
    stored = spec.seq[:spec.seq.index(attr)]
    before = {a.id for a in stored if not (a.derive or a.checksum)}  # what `after` may name
    params = {p.id for p in spec.params}
    tags: set[int] = set()
    for t in attr.tagged:
        if t.id in GENERATED_MEMBERS:
            problems.add(t.loc, f"tagged field {t.id!r} would hide the generated {t.id}()")
        if t.id in names:
            problems.add(t.loc, f"tagged field {t.id!r} has the name of another field")
        if t.tag in tags:
            problems.add(t.loc, f"tag {t.tag} is named twice")
        if t.after is not None and t.after not in before:
            problems.add(t.loc, f"after: no field {t.after!r} stored before the section, nor a tagged field "
                                f"before {t.id!r}")
        if t.if_ is not None and not {n.name for n in names_in(t.if_)} <= params:
            problems.add(t.loc, "if: a tagged field's condition may name only the type's params")
        _, why = program.tagged_value_field(attr, t.tag)
        if why:
            problems.add(t.loc, why)
        names.add(t.id)
        before.add(t.id)
        tags.add(t.tag)


def expressions(program: Program, problems) -> None:
    """Type-check every expression once, in the scope where it stands."""
    tr = Translator(program, problems)
    io = ("pos", "start", "end")
    for spec in program.all_types():
        if spec.intrinsic:
            continue
        for attr in spec.seq:
            scope = Scope(spec, io=io)
            for e, loc in ((attr.size, attr.at("size")), (attr.if_, attr.at("if")),
                           (attr.repeat_expr, attr.at("repeat-expr")), (attr.default, attr.at("-default"))):
                if e is not None:
                    tr.translate(e, scope, loc)
            for ref in [attr.type] + [t for _, t in attr.type.cases]:
                for arg in ref.args:
                    tr.translate(arg, scope, ref.loc)
            if attr.type.kind == RefKind.SWITCH and attr.type.switch_on is not None:
                tr.translate(attr.type.switch_on, scope, attr.type.loc)
                for key, _ in attr.type.cases:
                    if key is not None:
                        tr.translate(key, scope, attr.type.loc)
            if attr.repeat_until is not None:
                elem = tr.attr_type(attr).elem or T("any")
                tr.translate(attr.repeat_until, Scope(spec, underscore=("_it", elem), index="_i", io=io),
                             attr.at("repeat-until"))
            if attr.valid is not None:
                v = attr.valid
                for e in (v.eq, v.min, v.max, *v.any_of):
                    if e is not None:
                        tr.translate(e, scope, v.loc)
            if attr.process is not None:
                for arg in attr.process.args:
                    tr.translate(arg, scope, attr.process.loc)
            if attr.derive is not None and attr.derive.kind == DeriveKind.COUNT_OF:
                _, t = tr.typed(attr.derive.target, scope, attr.derive.loc)
                if t.kind not in ("array", "any"):
                    problems.add(attr.derive.loc, "count-of needs a repeated field")
        for inst in spec.instances:
            tr.translate(inst.value, Scope(spec), inst.at("value"))


def columnar(program: Program, problems) -> None:
    """A `-columnar` type must be readable field by field across instances (see shapes.py)."""
    for spec in program.all_types():
        if spec.columnar:
            for loc, message in columnar_problems(program, spec):
                problems.add(loc, message)


def hot(program: Program, problems) -> None:
    """A `-hot` type must be made of what the compiled backend reads (see shapes.py)."""
    for spec in program.all_types():
        if spec.hot and (found := hot_problem(program, spec)) is not None:
            problems.add(*found)


def record_views(program: Program, problems) -> None:
    """A `-record` view reads a schema's root, `-hot`, from its flat reader's slots: its fields
    are numbers and bytes, its checksum a crc32 field (whether the fields read flat is the
    emitter's to find: it says so where they do not)."""
    tr = Translator(program, problems)
    for spec in program.all_types():
        view = spec.record
        if view is None:
            continue
        if spec is not program.schema_of[spec].root or not spec.hot:
            problems.add(view.loc, "-record is read from a -hot schema root only")
        fields = {a.id for a in spec.seq}
        for param in view.params:
            if param.prim == "u8":
                problems.add(param.loc, "a -record param is held in 64 signed bits: u8 is too wide")
            if param.id in fields:
                problems.add(param.loc, f"a -record param named {param.id!r} would hide the field")
        for name, _ in view.fields:
            if keyword.iskeyword(name):
                problems.add(view.loc, f"-record field {name!r} is a Python keyword")
        scope = Scope(spec, names={p.id: (p.id, INT) for p in view.params})
        for name, e in view.fields:
            if e is None:
                continue
            kind = tr.typed(e, scope, view.loc)[1].kind
            attr = _field_at(tr, spec, e)
            kept_as_bytes = attr is not None and attr.size is not None and (attr.lazy or attr.process is not None)
            if kind not in ("int", "bool", "enum", "bytes", "any") and not kept_as_bytes:
                problems.add(view.loc, f"-record field {name!r}: only numbers and bytes of the fields read flat "
                                       "and the view's params")
        found = view.checksum is not None and _field_at(tr, spec, view.checksum)
        if found is not False and (found is None or found.checksum is None or found.checksum.algorithm != "crc32"):
            problems.add(view.loc, "-record checksum: a crc32 field of the fields read flat")


def record_writers(program: Program, problems) -> None:
    """A `-record-writer` packs a `-hot` type's `_pack` values (all of them, a struct's as a
    mapping of its own) from numbers and objects of the records written."""
    tr = Translator(program, problems)
    for spec in program.all_types():
        writer = spec.record_writer
        if writer is None:
            continue
        if not spec.hot:
            problems.add(writer.loc, "-record-writer packs a -hot type only")
        for param in writer.params:
            if param.prim == "u8":
                problems.add(param.loc, "a -record-writer param is held in 64 signed bits: u8 is too wide")
            if any(param.id == name for name, _, _ in writer.fields):
                problems.add(param.loc, f"a -record-writer param named {param.id!r} would hide the field")
        numbers = {name for name, kind, _ in writer.fields if kind == "number"}
        if writer.largest is not None and writer.largest not in numbers:
            problems.add(writer.loc, f"-record-writer largest: {writer.largest!r} is not a number field")
        given = {p.id: (p.id, INT) for p in writer.params}
        for name, kind, default in writer.fields:
            if default is not None:
                tr.translate(default, Scope(spec, names=given, index="i"), writer.loc)
        values = {**given, **{name: (name, WRITER_FIELD_TYPES[kind]) for name, kind, _ in writer.fields}}
        if writer.when is not None:
            tr.translate(writer.when, Scope(spec, names=values, index="i"), writer.loc)
        _check_pack(tr, problems, spec, writer, writer.pack, Scope(spec, names=values, index="i"))


def _check_pack(tr: Translator, problems, spec: TypeSpec, writer, pack: tuple, scope: Scope) -> None:
    """`pack` names each of `spec`'s `_pack` values once (a struct's as a mapping of its own)."""
    args = [a for a in spec.seq if not (a.derive or a.checksum)]
    if [name for name, _ in pack] != [a.id for a in args]:
        problems.add(writer.loc, f"-record-writer pack: the values of {spec.name!r} are "
                                 f"{', '.join(a.id for a in args)}, in that order")
        return
    for attr, (_, value) in zip(args, pack):
        if isinstance(value, tuple):
            t = tr.attr_type(attr)
            if t.kind != "user":
                problems.add(writer.loc, f"-record-writer pack: {attr.id!r} is not a struct")
            else:
                _check_pack(tr, problems, t.spec, writer, value, scope)
        else:
            tr.translate(value, scope, writer.loc)


def _field_at(tr: Translator, spec: TypeSpec, e) -> Attr | None:
    """The field `e` names (`a.b`: of a struct field), or None."""
    owner = spec
    if isinstance(e, ex.Attribute):
        t = tr.typed(e.obj, Scope(spec), None)[1]
        owner, e = t.spec if t.kind == "user" else None, ex.Name(e.pos, e.name)
    if owner is None or not isinstance(e, ex.Name):
        return None
    return next((a for a in owner.seq if a.id == e.name), None)


PASSES = [index, resolve, parents, extensions, expressions, columnar, hot, record_views, record_writers]
# After these, a schema with problems is left out of later passes, which would only repeat what
# an unresolved name already says; the other schemas go on, so one run reports everything.
STOP_AFTER = {resolve}


def run(program: Program, problems) -> None:
    for p in PASSES:
        before = len(problems.items)
        p(program, problems)
        if p in STOP_AFTER:
            failed = {pr.file for pr in problems.items[before:]}
            program.skip |= {sid for sid, s in program.schemas.items() if s.file in failed}


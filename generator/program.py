"""All schemas of a run plus the side tables that passes fill in (resolved types, parents...)."""
from __future__ import annotations

from dataclasses import dataclass, field

from . import expr as ex
from .model import Attr, EnumSpec, Instance, RefKind, Schema, TypeRef, TypeSpec


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@dataclass
class Program:
    schemas: dict[str, Schema]
    # filled by passes
    schema_of: dict[TypeSpec, Schema] = field(default_factory=dict)
    lexical_parent: dict[TypeSpec, TypeSpec | None] = field(default_factory=dict)
    resolved: dict[TypeRef, TypeSpec] = field(default_factory=dict)
    enum_of: dict[Attr | Instance, EnumSpec] = field(default_factory=dict)
    enum_owner: dict[EnumSpec, TypeSpec] = field(default_factory=dict)
    users: dict[TypeSpec, set[TypeSpec]] = field(default_factory=dict)  # type -> types using it
    skip: set[str] = field(default_factory=set)  # schemas left out of later passes

    def all_types(self):
        for sid, schema in self.schemas.items():
            if sid not in self.skip:
                yield from self.walk(schema.root)

    def walk(self, spec: TypeSpec):
        yield spec
        for sub in spec.types:
            yield from self.walk(sub)

    def class_path(self, spec: TypeSpec) -> list[str]:
        """Kaitai-style nested class names, outermost first: ["RecordBatch", "Record"]."""
        names = []
        node: TypeSpec | None = spec
        while node is not None:
            names.append(camel(node.name))
            node = self.lexical_parent.get(node)
        return names[::-1]

    def py_name(self, spec: TypeSpec) -> str:
        """Module-level name of a type's class (nested classes are flattened with '_')."""
        return "_".join(self.class_path(spec))

    def enum_py_name(self, enum: EnumSpec) -> str:
        return "_".join(self.class_path(self.enum_owner[enum]) + [camel(enum.name)])

    def parent_type(self, spec: TypeSpec) -> TypeSpec | None:
        """The one type that uses `spec` as a field, when there is exactly one."""
        users = self.users.get(spec, set())
        return next(iter(users)) if len(users) == 1 else None

    def lookup_type(self, name: str, scope: TypeSpec) -> TypeSpec | None:
        parts = name.split("::")
        found = self._lookup_first(parts[0], scope)
        for part in parts[1:]:
            if found is None:
                return None
            found = next((t for t in found.types if t.name == part), None)
        return found

    def _lookup_first(self, name: str, scope: TypeSpec) -> TypeSpec | None:
        node: TypeSpec | None = scope
        while node is not None:
            if node.name == name and self.lexical_parent.get(node) is None:
                return node
            for t in node.types:
                if t.name == name:
                    return t
            node = self.lexical_parent.get(node)
        own = self.schema_of[scope]
        if name == own.id:
            return own.root
        if name in own.imports and name in self.schemas:
            return self.schemas[name].root
        return None

    def lookup_enum(self, name: str, scope: TypeSpec) -> EnumSpec | None:
        parts = name.split("::")
        node: TypeSpec | None = scope
        if len(parts) > 1:
            node = self.lookup_type("::".join(parts[:-1]), scope)
            if node is None:
                return None
            return next((e for e in node.enums if e.name == parts[-1]), None)
        while node is not None:
            for e in node.enums:
                if e.name == name:
                    return e
            node = self.lexical_parent.get(node)
        return None

    def tagged_value_field(self, attr: Attr, tag: int) -> tuple[str | None, str | None]:
        """(the field of a tagged value's type that holds the value, None) for tag `tag` of the
        tagged-field section `attr`, or (None, why not). A section is a type with a repeated field
        `fields` whose items have an integer `tag` and a switch `data` with a case per known tag,
        each a type of one stored field (the value, or the items of an array)."""
        section = self.resolved.get(attr.type) if attr.type.kind == RefKind.USER else None
        fields = next((a for a in section.seq if a.id == "fields" and a.repeat), None) if section else None
        item = self.resolved.get(fields.type) if fields is not None and fields.type.kind == RefKind.USER else None
        if item is None or not {"tag", "data"} <= {a.id for a in item.seq}:
            return None, ("-tagged needs a section type with a repeated field 'fields' whose items have "
                          "'tag' and 'data'")
        data = next(a for a in item.seq if a.id == "data")
        case = next((t for key, t in data.type.cases if isinstance(key, ex.Int) and key.value == tag), None)
        holder = self.resolved.get(case) if case is not None else None
        stored = [a.id for a in holder.seq if not (a.derive or a.checksum)] if holder is not None else []
        if len(stored) != 1:
            return None, f"-tagged: tag {tag} needs a case of 'data' whose type holds one field"
        return stored[0], None

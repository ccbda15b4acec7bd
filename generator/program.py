"""All schemas of a run plus the side tables that passes fill in (resolved types, parents...)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .model import Attr, EnumSpec, Instance, Schema, TypeRef, TypeSpec


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

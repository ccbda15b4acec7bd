"""Protobuf payloads by their writer's schema: the registered `.proto` text and the files it
imports (its references, by import path) compiled offline by protoc, as grpcio-tools ships it
(Google's own compiler, run in a child process so that its messages are captured and a bad
schema cannot take this process down), once per schema; the message type found by the payload's
message indexes; values as protobuf's JSON mapping with the .proto's own field names."""
from __future__ import annotations

import base64
import binascii
import os
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath
from typing import Callable

from .problems import BAD_SCHEMA, MISMATCH, Remembered, UndecodableValue
from .registry import RegisteredSchema, referenced

Resolve = Callable[[str, int], RegisteredSchema | None]
COMPILE_SECONDS = 120


def _safe_name(name: str, schema_id: int) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not name.endswith(".proto") or "\0" in name:
        raise UndecodableValue(BAD_SCHEMA, f"schema {schema_id} imports {name!r}, which is no relative path "
                                           "of a .proto file", schema_id=schema_id)
    return name


def _serialized(text: str):
    """The FileDescriptorProto of a schema given in the registry's serialized form (base64),
    or None for .proto text."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    stripped = text.strip()
    if not stripped or any(c in stripped for c in " \n;{"):
        return None
    try:
        proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(stripped, validate=True))
    except (binascii.Error, ValueError, DecodeError):
        return None
    return proto if proto.message_type or proto.enum_type else None


def compile_files(files: dict[str, str], roots: list[str], schema_id: int):
    """The FileDescriptorSet of `roots` and everything they import, by protoc."""
    import grpc_tools
    from google.protobuf import descriptor_pb2

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="kafkacodec-proto-") as tmp:
        for name, text in files.items():
            target = Path(tmp, "src", name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        out = Path(tmp, "set.pb")
        argv = [sys.executable, "-m", "grpc_tools.protoc", f"-I{Path(tmp, 'src')}", f"-I{well_known}",
                "--include_imports", f"--descriptor_set_out={out}", *roots]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=COMPILE_SECONDS, cwd=Path(tmp, "src"),
                                  env=dict(os.environ, PYTHONWARNINGS="ignore"))
        except subprocess.TimeoutExpired:
            raise UndecodableValue(BAD_SCHEMA, f"protoc did not compile schema {schema_id} within "
                                               f"{COMPILE_SECONDS} s", schema_id=schema_id) from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().replace(str(Path(tmp, "src")) + os.sep, "")
            raise UndecodableValue(BAD_SCHEMA, f"schema {schema_id} does not compile: {said[-800:]}",
                                   schema_id=schema_id)
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


class ProtobufDecoder:
    def __init__(self, resolve: Resolve):
        self._resolve = resolve
        self.compiled = Remembered(self._compile)  # protoc runs once per schema, whether or not it compiles
        self._classes: dict[tuple[str, int, tuple[int, ...]], type] = {}

    def _sources(self, schema: RegisteredSchema, files: dict[str, str], seen: set) -> None:
        for ref in schema.references:
            if ref.name in files or ref.name in seen:
                continue
            seen.add(ref.name)
            found = referenced(self._resolve, schema, ref, "imports")
            self._sources(found, files, seen)
            files[_safe_name(ref.name, schema.id)] = found.text

    def _compile(self, schema: RegisteredSchema):
        """(a descriptor pool holding the schema and its imports, the schema's FileDescriptorProto)."""
        from google.protobuf import descriptor_pool

        files: dict[str, str] = {}
        self._sources(schema, files, set())
        root_proto = _serialized(schema.text)
        root = f"kafkacodec_schema_{schema.id}.proto"
        if root_proto is None:
            files[root] = schema.text
            compiled = compile_files(files, [root], schema.id).file
        else:  # imports compiled, the root as given
            compiled = list(compile_files(files, sorted(files), schema.id).file) if files else []
            root_proto.name = root
            compiled.append(root_proto)
        pool = descriptor_pool.DescriptorPool()
        try:
            for proto in compiled:
                pool.AddSerializedFile(proto.SerializeToString())
        except Exception as err:  # the pool refuses what does not link (a missing import)
            raise UndecodableValue(BAD_SCHEMA, f"schema {schema.id} does not link: {err}",
                                   schema_id=schema.id) from None
        return pool, next(p for p in compiled if p.name == root)

    def message_class(self, schema: RegisteredSchema, indexes: list[int]):
        key = (schema.context, schema.id, tuple(indexes))
        if key not in self._classes:
            from google.protobuf import message_factory

            pool, root = self.compiled(schema)
            names, types = [root.package] if root.package else [], root.message_type
            for depth, index in enumerate(indexes):
                if index >= len(types):
                    raise UndecodableValue(MISMATCH, f"message indexes {indexes} name no message of schema "
                                                     f"{schema.id} (level {depth} has {len(types)})",
                                           schema_id=schema.id)
                names.append(types[index].name)
                types = types[index].nested_type
            self._classes[key] = message_factory.GetMessageClass(pool.FindMessageTypeByName(".".join(names)))
        return self._classes[key]

    def decode(self, payload: bytes, schema: RegisteredSchema, indexes: list[int], at: int = 0) -> tuple[dict, int]:
        """The message of `payload[at:]` as protobuf's JSON mapping (field names as in the .proto,
        fields at their defaults included), and how many of its bytes are fields the schema does not
        define (a newer writer's), which the mapping leaves out."""
        from google.protobuf import json_format
        from google.protobuf.message import DecodeError

        cls = self.message_class(schema, indexes)
        try:
            message = cls.FromString(bytes(payload[at:]))
        except DecodeError as err:
            raise UndecodableValue(MISMATCH, f"the payload does not read as {cls.DESCRIPTOR.full_name} of schema "
                                             f"{schema.id}: {err}", at, schema.id) from None
        where = _not_utf8(message)
        if where is not None:  # proto2 keeps such strings as bytes; protobuf's JSON mapping has no form for them
            raise UndecodableValue(MISMATCH, f"the string {where} of {cls.DESCRIPTOR.full_name} (schema {schema.id}) "
                                             "is not UTF-8", at, schema.id)
        known = cls()
        known.CopyFrom(message)
        known.DiscardUnknownFields()  # nested messages' too
        unknown = message.ByteSize() - known.ByteSize()
        try:
            return json_format.MessageToDict(message, always_print_fields_with_no_presence=True,
                                             unquote_int64_if_possible=True,
                                             preserving_proto_field_name=True), unknown
        except (json_format.Error, TypeError, ValueError) as err:  # an Any of an unknown type, a time out of range
            raise UndecodableValue(MISMATCH, f"the message reads but has no JSON form: {type(err).__name__}: "
                                             f"{str(err)[:200]}", at, schema.id) from None


def _not_utf8(message, path: str = "") -> str | None:
    """The path of the first string field of `message` (nested messages, repeated fields and maps
    included) that holds bytes which are not UTF-8, or None."""
    from google.protobuf.descriptor import FieldDescriptor

    for field, value in message.ListFields():
        name = f"{path}{field.name}"
        entry = field.message_type.GetOptions().map_entry if field.message_type is not None else False
        if entry:  # a map: its keys and values
            value_field = field.message_type.fields_by_name["value"]
            for key, item in value.items():
                if isinstance(key, bytes):
                    return f"{name} (a key)"
                if value_field.type == FieldDescriptor.TYPE_STRING and isinstance(item, bytes):
                    return f"{name}[{key!r}]"
                if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                    found = _not_utf8(item, f"{name}[{key!r}].")
                    if found is not None:
                        return found
            continue
        repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
        items = value if repeated else [value]
        for i, item in enumerate(items):
            at = f"{name}[{i}]" if repeated else name
            if field.type == FieldDescriptor.TYPE_STRING and isinstance(item, bytes):
                return at
            if field.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
                found = _not_utf8(item, f"{at}.")
                if found is not None:
                    return found
    return None

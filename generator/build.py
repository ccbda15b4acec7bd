"""Build the model from a marked YAML tree, checking keys and value shapes as it goes.

Each builder knows the keys legal at its level; keys starting with "-" are this compiler's
extensions (Kaitai ignores them) and must be ones it knows, so a typo is not silently ignored.
"""
from __future__ import annotations

import builtins
import hashlib
import keyword
import re

from . import expr as ex
from .model import (INTRINSICS, PRIMITIVES, Attr, Checksum, Derive, DeriveKind, EnumSpec, EnumValue, Instance,
                    JsonAs, Param, Process, RecordView, RecordWriter, RefKind, Schema, Tagged, TypeRef, TypeSpec, Valid)
from .problems import Problems
from .source import Y

IDENT = re.compile(r"^[a-z][a-z0-9_]*$")

META_KEYS = {"id", "title", "application", "file-extension", "xref", "license", "ks-version",
             "ks-debug", "ks-opaque-types", "imports", "encoding", "endian", "bit-endian", "tags",
             "-intrinsic"}
TOP_KEYS = {"meta", "doc", "doc-ref", "seq", "types", "instances", "enums", "params", "-hot", "-record",
            "-record-writer"}
TYPE_KEYS = TOP_KEYS | {"-columnar"}
ATTR_KEYS = {"id", "type", "size", "size-eos", "if", "repeat", "repeat-expr", "repeat-until",
             "valid", "enum", "process", "contents", "encoding", "doc", "doc-ref",
             "-derive", "-checksum", "-default", "-lazy", "-require-eos", "-tagged", "-json"}
KAITAI_ATTR_KEYS_UNSUPPORTED = {"terminator", "consume", "include", "eos-error", "pad-right",
                                "pos", "io", "params"}
PARAM_KEYS = {"id", "type", "doc", "doc-ref"}
RECORD_KEYS = {"doc", "params", "when", "checksum", "fields"}
RECORD_WRITER_KEYS = {"doc", "params", "fields", "when", "pack", "largest"}
# names the generated readers and writers use for their arguments, and the prefixes of their locals
# (a param is a local there too)
RESERVED_PARAMS = {"buf", "pos", "end", "cls", "self", "out", "keep", "verify", "data", "cols", "u8"}
GENERATED_PREFIXES = r"_|[fwdza]_"
INSTANCE_KEYS = {"value", "enum", "doc", "doc-ref", "-eager"}
INSTANCE_KEYS_UNSUPPORTED = {"pos", "io", "type", "size", "size-eos", "repeat", "repeat-expr",
                             "repeat-until", "process", "if", "contents", "encoding"}
VALID_KEYS = {"eq", "min", "max", "any-of"}
DERIVE_KEYS = {"length-of", "length-from", "count-of", "if-absent", "plus"}
CHECKSUM_KEYS = {"algorithm", "from"}
TAGGED_KEYS = {"id", "tag", "default", "after", "doc", "json", "if"}
JSON_KEYS = {"name", "as"}
JSON_AS = ("bool", "uuid")
TOLERATED_EXTENSIONS = {"-orig-id", "-webide-representation", "-affected-by"}


class Builder:
    def __init__(self, file: str, problems: Problems):
        self.file = file
        self.p = problems

    # -- helpers -------------------------------------------------------------------------
    def keys(self, node: Y, legal: set[str], unsupported: set[str] = frozenset(), what: str = ""):
        for key, child in node.value.items():
            if key in legal or key in TOLERATED_EXTENSIONS:
                continue
            if key in unsupported:
                self.p.add(child.loc, f"key {key!r} is valid Kaitai but not supported by this compiler{what}")
            elif key.startswith("-"):
                self.p.add(child.loc, f"unknown extension key {key!r}")
            else:
                self.p.add(child.loc, f"unknown key {key!r}{what}")

    def expect_map(self, node: Y | None, what: str) -> bool:
        if node is None:
            return False
        if not node.is_map():
            self.p.add(node.loc, f"{what} must be a mapping")
            return False
        return True

    def text(self, node: Y | None) -> str | None:
        if node is None:
            return None
        if not isinstance(node.value, str):
            self.p.add(node.loc, "expected a string")
            return None
        return node.value

    def expression(self, node: Y | None) -> ex.Expr | None:
        if node is None:
            return None
        if not isinstance(node.value, (str, int, bool)):
            self.p.add(node.loc, "expected an expression")
            return None
        try:
            return ex.parse(node.value)
        except ex.ExprSyntaxError as e:
            self.p.add(node.loc, f"bad expression {node.value!r}: {e} (at character {e.column + 1})")
            return None

    def ident(self, node: Y | None, what: str) -> str | None:
        name = self.text(node)
        if name is not None and not IDENT.match(name):
            self.p.add(node.loc, f"{what} {name!r} must be lower_snake_case (a-z, 0-9, _)")
            return None
        return name

    # -- schema --------------------------------------------------------------------------
    def schema(self, root: Y, source: bytes) -> Schema | None:
        if not self.expect_map(root, "a schema"):
            return None
        self.keys(root, TOP_KEYS)
        meta = root.value.get("meta")
        if not self.expect_map(meta, "meta"):
            if meta is None:
                self.p.add(root.loc, "missing 'meta'")
            return None
        self.keys(meta, META_KEYS, what=" in meta")
        sid = self.ident(meta.value.get("id"), "meta/id")
        if "id" not in meta.value:
            self.p.add(meta.loc, "missing meta/id")
        endian = self.text(meta.value.get("endian"))
        if endian not in (None, "be", "le"):
            self.p.add(meta.value["endian"].loc, f"endian must be 'be' or 'le', not {endian!r}")
            endian = None
        imports = []
        imp = meta.value.get("imports")
        if imp is not None:
            if not imp.is_list():
                self.p.add(imp.loc, "imports must be a list")
            else:
                imports = [n for n in (self.text(i) for i in imp.value) if n]
        intrinsic = self.text(meta.value.get("-intrinsic"))
        if intrinsic is not None and intrinsic not in INTRINSICS:
            self.p.add(meta.value["-intrinsic"].loc,
                       f"unknown intrinsic {intrinsic!r}; known: {', '.join(sorted(INTRINSICS))}")
            intrinsic = None
        if sid is None:
            return None
        spec = self.type_spec(sid, root, endian, intrinsic)
        title = self.text(meta.value.get("title"))
        return Schema(sid, self.file, root.loc, spec, title, tuple(imports), meta.plain(),
                      hashlib.sha256(source).hexdigest(), meta.value["id"].loc,
                      imp.loc if imp is not None else None)

    def type_spec(self, name: str, node: Y, endian: str | None, intrinsic: str | None = None) -> TypeSpec:
        v = node.value
        if node.loc.path != "/":
            self.keys(node, TYPE_KEYS)
            if "meta" in v and self.expect_map(v["meta"], "meta"):
                self.keys(v["meta"], {"endian", "encoding", "bit-endian"}, what=" in a nested type's meta")
                endian = self.text(v["meta"].value.get("endian")) or endian
        params = self.params(v.get("params"))
        seq = self.seq(v.get("seq"), endian)
        instances = self.instances(v.get("instances"))
        types = []
        tnode = v.get("types")
        if self.expect_map(tnode, "types"):
            for tname, tn in tnode.value.items():
                if not IDENT.match(tname):
                    self.p.add(tn.loc, f"type name {tname!r} must be lower_snake_case")
                    continue
                if self.expect_map(tn, f"type {tname!r}"):
                    types.append(self.type_spec(tname, tn, endian))
        enums = self.enums(v.get("enums"))
        columnar = v.get("-columnar")
        if columnar is not None and not isinstance(columnar.value, bool):
            self.p.add(columnar.loc, "-columnar must be true or false")
        hot = v.get("-hot")
        if hot is not None and not isinstance(hot.value, bool):
            self.p.add(hot.loc, "-hot must be true or false")
        return TypeSpec(name, node.loc, tuple(seq), tuple(instances), tuple(types), tuple(enums),
                        self.text(v.get("doc")), self.text(v.get("doc-ref")), intrinsic, endian,
                        bool(columnar is not None and columnar.value is True),
                        columnar.loc if columnar is not None else None,
                        bool(hot is not None and hot.value is True), hot.loc if hot is not None else None,
                        tuple(params), self.record_view(v.get("-record")),
                        self.record_writer(v.get("-record-writer")))

    def record_view(self, node: Y | None) -> RecordView | None:
        if node is None or not self.expect_map(node, "-record"):
            return None
        self.keys(node, RECORD_KEYS, what=" in -record")
        v = node.value
        fields = []
        for name, item in self.record_fields(node, "-record"):
            if item.is_list() and not item.value:  # []: a new empty list
                fields.append((name, None))
            elif (e := self.expression(item)) is not None:
                fields.append((name, e))
        return RecordView(node.loc, tuple(self.params(v.get("params"))), self.expression(v.get("when")),
                          self.expression(v.get("checksum")), tuple(fields), self.text(v.get("doc")))

    def record_writer(self, node: Y | None) -> RecordWriter | None:
        if node is None or not self.expect_map(node, "-record-writer"):
            return None
        self.keys(node, RECORD_WRITER_KEYS, what=" in -record-writer")
        v = node.value
        fields = []
        for name, item in self.record_fields(node, "-record-writer"):
            if item.value is None:  # ~: an object, as it is
                fields.append((name, "object", None))
            elif item.is_list() and not item.value:  # []: a list, None standing for an empty one
                fields.append((name, "list", None))
            elif (e := self.expression(item)) is not None:  # a number, and its default
                fields.append((name, "number", e))
        pack = self.pack_values(v.get("pack"))
        if v.get("pack") is None:
            self.p.add(node.loc, "-record-writer needs pack values")
        return RecordWriter(node.loc, tuple(self.params(v.get("params"))), tuple(fields),
                            self.expression(v.get("when")), pack, self.text(v.get("largest")),
                            self.text(v.get("doc")))

    def record_fields(self, node: Y, what: str) -> list[tuple[str, Y]]:
        """The fields of a -record or -record-writer, each named in lower_snake_case."""
        fnode = node.value.get("fields")
        if fnode is None:
            self.p.add(node.loc, f"{what} needs fields")
        if not self.expect_map(fnode, f"{what} fields"):
            return []
        out = []
        for name, item in fnode.value.items():
            if IDENT.match(name):
                out.append((name, item))
            else:
                self.p.add(item.loc, f"record field {name!r} must be lower_snake_case")
        return out

    def pack_values(self, node: Y | None) -> tuple:
        """(name, expression or a nested tuple of them) for each of `_pack`'s values."""
        if node is None or not self.expect_map(node, "-record-writer pack"):
            return ()
        out = []
        for name, item in node.value.items():
            if item.is_map():
                out.append((name, self.pack_values(item)))
            elif (e := self.expression(item)) is not None:
                out.append((name, e))
        return tuple(out)

    def params(self, node: Y | None) -> list[Param]:
        """Integer parameters only: what a version number or a count needs."""
        if node is None:
            return []
        if not node.is_list():
            self.p.add(node.loc, "params must be a list")
            return []
        out = []
        for item in node.value:
            if not self.expect_map(item, "a param"):
                continue
            self.keys(item, PARAM_KEYS, what=" in a param")
            pid = self.ident(item.value.get("id"), "param id")
            prim = self.text(item.value.get("type"))
            if pid is None:
                if "id" not in item.value:  # a bad one is reported already
                    self.p.add(item.loc, "a param needs an 'id'")
                continue
            if (pid in RESERVED_PARAMS or keyword.iskeyword(pid) or hasattr(builtins, pid)
                    or re.match(GENERATED_PREFIXES, pid)):
                self.p.add(item.value["id"].loc, f"param id {pid!r} is a Python builtin or keyword, or a name the "
                                                 "generated code uses; choose another")
                continue
            if prim is None or not re.fullmatch(r"[us][1248]", prim):
                self.p.add(item.loc, "a param's type must be an integer: u1, u2, u4, u8, s1, s2, s4 or s8")
                continue
            if any(p.id == pid for p in out):
                self.p.add(item.value["id"].loc, f"duplicate param id {pid!r}")
                continue
            out.append(Param(pid, prim, item.loc, self.text(item.value.get("doc"))))
        return out

    def seq(self, node: Y | None, endian: str | None) -> list[Attr]:
        if node is None:
            return []
        if not node.is_list():
            self.p.add(node.loc, "seq must be a list")
            return []
        out = []
        seen: set[str] = set()
        for item in node.value:
            if not self.expect_map(item, "a seq entry"):
                continue
            attr = self.attr(item, endian)
            if attr is None:
                continue
            if attr.id in seen:
                self.p.add(item.value["id"].loc, f"duplicate field id {attr.id!r}")
                continue
            seen.add(attr.id)
            out.append(attr)
        return out

    def attr(self, node: Y, endian: str | None) -> Attr | None:
        v = node.value
        self.keys(node, ATTR_KEYS, KAITAI_ATTR_KEYS_UNSUPPORTED)
        if "id" not in v:
            self.p.add(node.loc, "a seq entry needs an 'id'")
            return None
        aid = self.ident(v["id"], "field id")
        if aid is None:
            return None
        size = self.expression(v.get("size"))
        size_eos = bool(v["size-eos"].value) if "size-eos" in v else False
        encoding = self.text(v.get("encoding"))
        contents = None
        if "contents" in v:
            contents = self.contents(v["contents"])
            if contents is not None and size is None:
                size = ex.Int(0, len(contents))  # fixed bytes: their own length is the size
        tref = self.type_ref(v.get("type"), node, endian, "size" in v or size_eos, encoding,
                             contents is not None)
        repeat = self.text(v.get("repeat"))
        if repeat not in (None, "expr", "eos", "until"):
            self.p.add(v["repeat"].loc, f"repeat must be expr, eos or until, not {repeat!r}")
            repeat = None
        if repeat == "expr" and "repeat-expr" not in v:
            self.p.add(v["repeat"].loc, "repeat: expr needs repeat-expr")
        if repeat == "until" and "repeat-until" not in v:
            self.p.add(v["repeat"].loc, "repeat: until needs repeat-until")
        process = None
        if "process" in v:
            process = self.process(v["process"])
        lazy = bool(v["-lazy"].value) if "-lazy" in v else False
        require_eos = bool(v["-require-eos"].value) if "-require-eos" in v else False
        return Attr(
            id=aid, loc=node.loc, type=tref, size=size, size_eos=size_eos,
            if_=self.expression(v.get("if")), repeat=repeat,
            repeat_expr=self.expression(v.get("repeat-expr")),
            repeat_until=self.expression(v.get("repeat-until")),
            valid=self.valid(v.get("valid")), enum=self.text(v.get("enum")), process=process,
            contents=contents, doc=self.text(v.get("doc")), doc_ref=self.text(v.get("doc-ref")),
            derive=self.derive(v.get("-derive")), checksum=self.checksum(v.get("-checksum")),
            default=self.expression(v.get("-default")), lazy=lazy, require_eos=require_eos,
            tagged=self.tagged(v.get("-tagged")), json=self.json_as(v.get("-json")),
            key_locs={k: n.loc for k, n in v.items()})

    def tagged(self, node: Y | None) -> tuple[Tagged, ...]:
        if node is None:
            return ()
        if not node.is_list():
            self.p.add(node.loc, "-tagged must be a list")
            return ()
        out = []
        for item in node.value:
            if not self.expect_map(item, "a -tagged entry"):
                continue
            self.keys(item, TAGGED_KEYS, what=" in -tagged")
            tid = self.ident(item.value.get("id"), "tagged field id")
            tag = item.value.get("tag")
            if tid is None or tag is None or type(tag.value) is not int or tag.value < 0:
                self.p.add(item.loc, "a -tagged entry needs an 'id' and a 'tag' (an integer, 0 or more)")
                continue
            default = item.value["default"].plain() if "default" in item.value else None
            if default == []:
                default = ()
            elif default is not None and type(default) not in (int, bytes):
                self.p.add(item.value["default"].loc, "a tagged field's default must be an integer, bytes "
                                                      "(!!binary), null or []")
                continue
            after = self.ident(item.value["after"], "after") if "after" in item.value else None
            out.append(Tagged(tid, tag.value, default, item.loc, after, self.text(item.value.get("doc")),
                              self.json_as(item.value.get("json")), self.expression(item.value.get("if"))))
        return tuple(out)

    def json_as(self, node: Y | None) -> JsonAs | None:
        if node is None or not self.expect_map(node, "-json"):
            return None
        self.keys(node, JSON_KEYS, what=" in -json")
        name, as_ = self.text(node.value.get("name")), self.text(node.value.get("as"))
        if as_ is not None and as_ not in JSON_AS:
            self.p.add(node.value["as"].loc, f"-json as: must be {' or '.join(JSON_AS)}, not {as_!r}")
            as_ = None
        return JsonAs(node.loc, name, as_)

    def contents(self, node: Y) -> bytes | None:
        val = node.plain()
        items = val if isinstance(val, list) else [val]
        out = bytearray()
        for item in items:
            if isinstance(item, int) and 0 <= item <= 255:
                out.append(item)
            elif isinstance(item, str):
                out += item.encode("utf-8")
            else:
                self.p.add(node.loc, "contents must be a string, a byte or a list of them")
                return None
        return bytes(out)

    def type_ref(self, node: Y | None, attr: Y, endian, sized: bool, encoding, has_contents) -> TypeRef:
        loc = node.loc if node is not None else attr.loc
        if node is None:
            if not sized and not has_contents:
                self.p.add(attr.loc, "a field without 'type' needs 'size' or 'size-eos'")
            return TypeRef(RefKind.BYTES, loc)
        if node.is_map():
            self.keys(node, {"switch-on", "cases"})
            on = self.expression(node.value.get("switch-on"))
            cases = []
            cnode = node.value.get("cases")
            if on is None or not self.expect_map(cnode, "cases"):
                if cnode is None:
                    self.p.add(node.loc, "switch needs 'switch-on' and 'cases'")
                return TypeRef(RefKind.SWITCH, loc, switch_on=on)
            for key, tnode in cnode.value.items():
                try:
                    key_expr = ex.parse(key) if key != "_" else None
                except ex.ExprSyntaxError as e:
                    self.p.add(tnode.loc, f"bad case expression {key!r}: {e}")
                    continue
                cases.append((key_expr, self.type_ref(tnode, attr, endian, sized, encoding, False)))
            return TypeRef(RefKind.SWITCH, loc, switch_on=on, cases=tuple(cases))
        name = self.text(node)
        if name is None:
            return TypeRef(RefKind.BYTES, loc)
        if name == "str" or name == "strz":
            if name == "strz":
                self.p.add(loc, "type 'strz' is valid Kaitai but not supported by this compiler")
            if not sized:
                self.p.add(loc, "a 'str' field needs 'size' or 'size-eos'")
            if encoding is None:
                self.p.add(loc, "a 'str' field needs 'encoding'")
            return TypeRef(RefKind.STR, loc, encoding=encoding or "UTF-8")
        m = re.fullmatch(r"([us][1248]|f[48])(be|le)?", name)
        if m:
            prim, suffix = m.group(1), m.group(2)
            width = PRIMITIVES[prim][1]
            end = suffix or endian
            if width > 1 and end is None:
                self.p.add(loc, f"type {name!r} needs an endianness: set meta/endian or write {name}be")
            return TypeRef(RefKind.PRIM, loc, prim=prim, endian=end or "be")
        if re.fullmatch(r"b\d+", name):
            self.p.add(loc, f"bit-sized integer {name!r} is valid Kaitai but not supported by this compiler")
            return TypeRef(RefKind.BYTES, loc)
        args: tuple[ex.Expr, ...] = ()
        call = re.fullmatch(r"([^(]*)\((.*)\)", name, re.S)
        if call:  # name(arg, ...): parsed as a call, which the expression language has
            name = call.group(1)
            try:
                parsed = ex.parse(f"f({call.group(2)})")
                args = parsed.args
            except ex.ExprSyntaxError as e:
                self.p.add(loc, f"bad arguments in {node.value!r}: {e}")
        if not re.fullmatch(r"[a-z][a-z0-9_]*(::[a-z][a-z0-9_]*)*", name):
            self.p.add(loc, f"bad type name {name!r}")
        return TypeRef(RefKind.USER, loc, name=name, args=args)

    def process(self, node: Y) -> Process | None:
        e = self.expression(node)
        if e is None:
            return None
        if isinstance(e, ex.Name):
            return Process(e.name, (), node.loc)
        if isinstance(e, ex.Call) and isinstance(e.func, ex.Name):
            return Process(e.func.name, e.args, node.loc)
        self.p.add(node.loc, "process must be a name or name(args)")
        return None

    def valid(self, node: Y | None) -> Valid | None:
        if node is None:
            return None
        if not node.is_map():
            return Valid(node.loc, eq=self.expression(node))
        self.keys(node, VALID_KEYS, {"expr", "in-enum"})
        any_of = ()
        if "any-of" in node.value:
            lst = node.value["any-of"]
            if not lst.is_list():
                self.p.add(lst.loc, "any-of must be a list")
            else:
                any_of = tuple(e for e in (self.expression(i) for i in lst.value) if e is not None)
        return Valid(node.loc, self.expression(node.value.get("eq")), self.expression(node.value.get("min")),
                     self.expression(node.value.get("max")), any_of)

    def derive(self, node: Y | None) -> Derive | None:
        if node is None or not self.expect_map(node, "-derive"):
            return None
        self.keys(node, DERIVE_KEYS, what=" in -derive")
        kinds = [k for k in ("length-of", "length-from", "count-of") if k in node.value]
        if len(kinds) != 1:
            self.p.add(node.loc, "-derive needs exactly one of length-of, length-from, count-of")
            return None
        kind = kinds[0]
        if kind == "count-of":
            target = self.expression(node.value[kind])
        else:
            target = self.ident(node.value[kind], kind)
        if target is None:
            return None
        absent = None
        if "if-absent" in node.value:
            absent = node.value["if-absent"].value
            if not isinstance(absent, int) or isinstance(absent, bool):
                self.p.add(node.value["if-absent"].loc, "if-absent must be an integer")
                absent = None
        plus = 0
        if "plus" in node.value:
            plus = node.value["plus"].value
            if not isinstance(plus, int) or isinstance(plus, bool) or kind == "length-from":
                self.p.add(node.value["plus"].loc, "plus must be an integer, with length-of or count-of")
                plus = 0
        return Derive(DeriveKind(kind), target, node.loc, absent, plus)

    def checksum(self, node: Y | None) -> Checksum | None:
        if node is None or not self.expect_map(node, "-checksum"):
            return None
        self.keys(node, CHECKSUM_KEYS, what=" in -checksum")
        algo = self.text(node.value.get("algorithm"))
        start = self.ident(node.value.get("from"), "from")
        if algo is None or start is None:
            self.p.add(node.loc, "-checksum needs 'algorithm' and 'from'")
            return None
        return Checksum(algo, start, node.loc)

    def instances(self, node: Y | None) -> list[Instance]:
        if node is None or not self.expect_map(node, "instances"):
            return []
        out = []
        for name, inode in node.value.items():
            if not IDENT.match(name):
                self.p.add(inode.loc, f"instance name {name!r} must be lower_snake_case")
                continue
            if not self.expect_map(inode, f"instance {name!r}"):
                continue
            self.keys(inode, INSTANCE_KEYS, INSTANCE_KEYS_UNSUPPORTED, " (only value instances are)")
            if "value" not in inode.value:
                self.p.add(inode.loc, f"instance {name!r} needs 'value'")
                continue
            value = self.expression(inode.value["value"])
            if value is None:
                continue
            eager = inode.value.get("-eager")
            if eager is not None and not isinstance(eager.value, bool):
                self.p.add(eager.loc, "-eager must be true or false")
            out.append(Instance(name, inode.loc, value, self.text(inode.value.get("enum")),
                                self.text(inode.value.get("doc")), self.text(inode.value.get("doc-ref")),
                                {k: n.loc for k, n in inode.value.items()},
                                bool(eager is not None and eager.value is True)))
        return out

    def enums(self, node: Y | None) -> list[EnumSpec]:
        if node is None or not self.expect_map(node, "enums"):
            return []
        out = []
        for name, enode in node.value.items():
            if not IDENT.match(name):
                self.p.add(enode.loc, f"enum name {name!r} must be lower_snake_case")
                continue
            if not self.expect_map(enode, f"enum {name!r}"):
                continue
            values = []
            ids: set[str] = set()
            for key, vnode in enode.value.items():
                try:
                    number = int(key, 0)
                except ValueError:
                    self.p.add(vnode.loc, f"enum key {key!r} must be an integer")
                    continue
                if vnode.is_map():
                    self.keys(vnode, {"id", "doc", "doc-ref", "-orig-id"})
                    vid = self.ident(vnode.value.get("id"), "enum value id")
                    doc = self.text(vnode.value.get("doc"))
                else:
                    vid = self.ident(vnode, "enum value id")
                    doc = None
                if vid is None:
                    continue
                if vid in ids:
                    self.p.add(vnode.loc, f"duplicate enum value id {vid!r}")
                    continue
                ids.add(vid)
                values.append(EnumValue(number, vid, doc, vnode.loc))
            out.append(EnumSpec(name, tuple(values), enode.loc))
        return out

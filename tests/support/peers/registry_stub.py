"""A stand-in for Confluent's Schema Registry on 127.0.0.1, for confluent-kafka's serializers to
register and look up schemas against. It keeps what the registry keeps and writes, for every
change, the records the registry writes to its storage topic `_schemas` (facts read from
confluentinc/schema-registry: KafkaStore's keys and values are compact JSON; SCHEMA keys carry
magic 1 and the others 0; a SCHEMA value lists subject, version, id, schemaType (left out for
AVRO, as registries before 8.0 write it), references (left out when none), schema and deleted;
a soft delete re-writes the value with deleted true; a permanent one writes a null value; a
subject's soft delete writes DELETE_SUBJECT with the highest version it deletes).

Protobuf schemas asked for in the serialized form are answered as the registry answers them: a
base64 FileDescriptorProto compiled (here by grpcio-tools' protoc) from the stored text."""
from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse


def compact(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class Store:
    def __init__(self) -> None:
        self.versions: dict[tuple[str, int], dict] = {}  # (subject, version) -> value object
        self.records: list[tuple[bytes, bytes | None]] = []  # what went to `_schemas`, in order
        self.lock = threading.Lock()

    def _write(self, key: dict, value: dict | None) -> None:
        self.records.append((compact(key), None if value is None else compact(value)))

    def _schema_key(self, subject: str, version: int) -> dict:
        return {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}

    def register(self, subject: str, body: dict) -> dict:
        schema_type = body.get("schemaType") or "AVRO"
        schema = body["schema"]
        if schema_type == "PROTOBUF" and "syntax" not in schema:  # serialized form: stored as text
            raise ValueError("the stub stores Protobuf schemas registered as .proto text only")
        refs = [{"name": r["name"], "subject": r["subject"], "version": r["version"]} for r in body.get("references") or []]
        fingerprint = hashlib.md5(compact([schema, refs])).hexdigest()
        for (s, v), value in sorted(self.versions.items()):
            if s == subject and not value.get("deleted") and value["_md5"] == fingerprint:
                return value
        same = [v["id"] for v in self.versions.values() if v["_md5"] == fingerprint]
        schema_id = same[0] if same else max([v["id"] for v in self.versions.values()] + [0]) + 1
        version = max([v for (s, v) in self.versions if s == subject] + [0]) + 1
        value = {"subject": subject, "version": version, "id": schema_id}
        if schema_type != "AVRO":
            value["schemaType"] = schema_type
        if refs:
            value["references"] = refs
        value["schema"] = schema
        value["deleted"] = False
        self._write(self._schema_key(subject, version), value)
        self.versions[(subject, version)] = dict(value, _md5=fingerprint)
        return self.versions[(subject, version)]

    def soft_delete(self, subject: str, version: int) -> None:
        value = self.versions[(subject, version)]
        value["deleted"] = True
        self._write(self._schema_key(subject, version), {k: v for k, v in value.items() if k != "_md5"})

    def hard_delete(self, subject: str, version: int) -> None:
        del self.versions[(subject, version)]
        self._write(self._schema_key(subject, version), None)

    def delete_subject(self, subject: str) -> list[int]:
        live = sorted(v for (s, v), value in self.versions.items() if s == subject and not value.get("deleted"))
        self._write({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0},
                    {"subject": subject, "version": live[-1]})
        for v in live:  # in memory only, as the registry's reader marks them
            self.versions[(subject, v)]["deleted"] = True
        return live

    def latest(self, subject: str) -> dict | None:
        live = [value for (s, _), value in self.versions.items() if s == subject and not value.get("deleted")]
        return max(live, key=lambda v: v["version"]) if live else None

    def by_id(self, schema_id: int) -> dict | None:
        found = [v for v in self.versions.values() if v["id"] == schema_id]
        return min(found, key=lambda v: (v.get("deleted", False), v["subject"])) if found else None


def serialized(store: Store, value: dict) -> str:
    """The registry's serialized form of a Protobuf schema: its FileDescriptorProto, base64."""
    from google.protobuf import descriptor_pb2
    import grpc_tools

    files = {}

    def gather(v):
        for ref in v.get("references", []):
            ref_value = store.versions[(ref["subject"], ref["version"])]
            files[ref["name"]] = ref_value["schema"]
            gather(ref_value)
    gather(value)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in dict(files, **{"root.proto": value["schema"]}).items():
            Path(tmp, name).parent.mkdir(parents=True, exist_ok=True)
            Path(tmp, name).write_text(text)
        out = Path(tmp, "out.pb")
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}",
                        f"-I{Path(grpc_tools.__file__).parent / '_proto'}", f"--descriptor_set_out={out}",
                        "root.proto"], check=True, capture_output=True)
        proto = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    return base64.b64encode(proto.SerializeToString()).decode()


def _answer(store: Store, value: dict, query: dict) -> dict:
    out = {k: v for k, v in value.items() if k not in ("_md5",)}
    out.setdefault("schemaType", "AVRO")
    out.setdefault("references", [])
    if query.get("format") == ["serialized"] and out["schemaType"] == "PROTOBUF":
        out["schema"] = serialized(store, value)
    return out


class Handler(BaseHTTPRequestHandler):
    store: Store

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, obj) -> None:
        body = compact(obj)
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _route(self, method: str) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else {}
        store = self.store
        with store.lock:
            if method == "POST" and len(parts) == 3 and parts[0] == "subjects" and parts[2] == "versions":
                value = store.register(parts[1], body)
                return self._send(200, dict(_answer(store, value, {}), id=value["id"]))
            if method == "POST" and len(parts) == 2 and parts[0] == "subjects":  # lookup
                for (s, _), value in sorted(store.versions.items()):
                    if s == parts[1] and value["schema"] == body.get("schema") and not value.get("deleted"):
                        return self._send(200, _answer(store, value, query))
                return self._send(404, {"error_code": 40403, "message": "Schema not found"})
            if method == "GET" and len(parts) == 4 and parts[0] == "subjects" and parts[2] == "versions":
                value = store.latest(parts[1]) if parts[3] == "latest" else store.versions.get((parts[1], int(parts[3])))
                if value is None:
                    return self._send(404, {"error_code": 40402, "message": "Version not found"})
                return self._send(200, _answer(store, value, query))
            if method == "GET" and len(parts) == 3 and parts[:2] == ["schemas", "ids"]:
                value = store.by_id(int(parts[2]))
                if value is None:
                    return self._send(404, {"error_code": 40403, "message": "Schema not found"})
                return self._send(200, _answer(store, value, query))
            permanent = query.get("permanent") == ["true"]
            if method == "DELETE" and len(parts) == 4 and parts[0] == "subjects" and parts[2] == "versions":
                version = int(parts[3])
                (store.hard_delete if permanent else store.soft_delete)(parts[1], version)
                return self._send(200, version)
            if method == "DELETE" and len(parts) == 2 and parts[0] == "subjects":
                if permanent:
                    gone = sorted((v for (s, v) in store.versions if s == parts[1]), reverse=True)
                    for v in gone:
                        store.hard_delete(parts[1], v)
                    return self._send(200, sorted(gone))
                return self._send(200, store.delete_subject(parts[1]))
        self._send(404, {"error_code": 404, "message": f"not served by the stub: {method} {url.path}"})

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_DELETE(self):
        self._route("DELETE")


class RegistryStub:
    """`with RegistryStub() as stub:` serves on stub.url; stub.store holds the state and records."""

    def __init__(self) -> None:
        self.store = Store()
        handler = type("BoundHandler", (Handler,), {"store": self.store})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "RegistryStub":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

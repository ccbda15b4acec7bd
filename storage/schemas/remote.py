"""Schemas asked of a running registry over its REST API, each once, as records name them:
`GET /schemas/ids/{id}`, `GET /schemas/guids/{guid}` and, for references,
`GET /subjects/{subject}/versions/{version}`. A registry that does not answer ends the command
(a KafkaCodecError naming the address); one that answers 404 holds no such schema."""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from kafkacodec.codec.values.registry import RegisteredSchema, Registry
from kafkacodec.runtime.errors import KafkaCodecError
from kafkacodec.storage.diskio.safeio import FileProblem

from .files import answered_version
from .source import SchemaSource

TIMEOUT_SECONDS = 30


class RegistryUnreachable(FileProblem):
    """A registry that does not answer, or not with a schema: a source that cannot be used (exit 2)."""

    def __init__(self, message: str):
        KafkaCodecError.__init__(self, message)
        self.file, self.message, self.position = None, message, None


class RemoteRegistry(Registry):
    def __init__(self, url: str):
        super().__init__()
        self.url = url.rstrip("/")
        self._asked: set[str] = set()

    def _get(self, path: str) -> dict | None:
        address = self.url + path
        try:
            with urllib.request.urlopen(urllib.request.Request(
                    address, headers={"Accept": "application/vnd.schemaregistry.v1+json"}), timeout=TIMEOUT_SECONDS) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise RegistryUnreachable(f"{address}: the registry answered {err.code} {err.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise RegistryUnreachable(f"{address}: no answer from the registry: {err}") from None
        except RecursionError:
            raise RegistryUnreachable(f"{address}: the registry's answer nests deeper than Python reads") from None

    def _once(self, path: str, fill) -> None:
        if path not in self._asked:
            self._asked.add(path)
            obj = self._get(path)
            if obj is None:
                return
            try:
                self.add(fill(obj if isinstance(obj, dict) else {}))
            except (ValueError, KeyError, TypeError, OverflowError, AttributeError) as err:
                raise RegistryUnreachable(f"{self.url}{path}: the registry's answer is not a schema: {err}") from None

    def by_id(self, schema_id: int, context: str | None = None) -> RegisteredSchema | None:
        found = super().by_id(schema_id, context)
        if found is None:
            self._once(f"/schemas/ids/{schema_id}", lambda obj: answered_version(
                dict(obj, id=schema_id, subject=obj.get("subject", f"id-{schema_id}")), self.url))
            found = super().by_id(schema_id, context)
        return found

    def by_guid(self, guid: str) -> RegisteredSchema | None:
        found = super().by_guid(guid)
        if found is None:
            self._once(f"/schemas/guids/{guid}", lambda obj: answered_version(
                dict(obj, subject=obj.get("subject", f"guid-{guid}")), self.url))
            found = super().by_guid(guid)
        return found

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        found = super().version(subject, version)
        if found is None:
            quoted = urllib.parse.quote(subject, safe="")
            self._once(f"/subjects/{quoted}/versions/{version}?deleted=true", lambda obj: answered_version(obj, self.url))
            found = super().version(subject, version)
        return found


def source(url: str) -> SchemaSource:
    return SchemaSource(RemoteRegistry(url), url)

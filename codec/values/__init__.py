"""Record keys and values as values: the framing Confluent's serializers put before a payload,
the state of a schema registry rebuilt from its own `_schemas` records, and decoders by format
(Avro, Protobuf, JSON Schema; text, JSON, hex and base64). Nothing here reads files: the log
layer hands bytes in (storage.schemas)."""

"""The kafkacodec schema compiler: .ksy source -> model -> passes -> plan -> Jinja2 -> outputs.

Nothing in this package knows about Kafka; the schemas carry that knowledge. It never imports the
generated code or the runtime, so it runs even when generated/ is stale or broken.
"""
GENERATOR_VERSION = "0.1.0"

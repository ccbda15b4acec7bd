"""Small runtime for generated codecs: varints, checksums, compression codecs and typed errors.

It imports nothing else of kafkacodec, so generated modules depend on this package alone.
"""

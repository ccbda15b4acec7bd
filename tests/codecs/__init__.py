"""The generated codecs, the runtime and the facade: reading, writing and damage, pure and compiled."""

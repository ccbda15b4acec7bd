"""The subcommands of `kafkacodec`, one module per kind of work.

Each command imports what it needs from the layers below (codec, storage, pipeline, generated, and
libraries such as rich) inside its own function, never at the top of these modules: so that
`kafkacodec generate` still runs while generated/ is broken or half rebuilt, and so that starting
the command line stays fast. At the top of a module here: the standard library, click, and these
modules themselves (tests/cli/test_generate_without_generated.py holds them to it)."""

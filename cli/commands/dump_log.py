"""`kafkacodec dump-log`: Kafka 4.1's kafka-dump-log, as a drop-in. Its options are parsed as
Kafka's tool parses them (joptsimple: `--files a,b`, `--name=value`, a single dash allowed, no
abbreviations, other arguments ignored), its output is Kafka's line for line, and so are its exit
statuses: 1 for usage errors and for what ends Kafka's run with an exception (then later files
and the final reports are not printed, as there), else 0 — damage Kafka's tool lists (a CRC
mismatch, invalid bytes at the end) is not a failure to it."""
from __future__ import annotations

import sys

import click

FLAGS = ("print-data-log", "verify-index-only", "index-sanity-check", "deep-iteration", "offsets-decoder",
         "transaction-log-decoder", "cluster-metadata-decoder", "remote-log-metadata-decoder",
         "share-group-state-decoder", "skip-record-metadata", "help", "version")
WITH_VALUE = ("files", "max-message-size", "max-bytes")
OPTIONAL_VALUE = ("key-decoder-class", "value-decoder-class")
DESCRIPTION = ("This tool helps to parse a log file and dump its contents to the console, useful for debugging a "
               "seemingly corrupt log segment.")
HELP = [
    ("--cluster-metadata-decoder", "Decode records as KRaft metadata records (__cluster_metadata, snapshots)."),
    ("--deep-iteration", "Print every record, not only each batch (implied by --print-data-log)."),
    ("--files <String: file1, file2, ...>", "REQUIRED: the .log, .index, .timeindex, .txnindex, .snapshot and "
                                            ".checkpoint files to dump, separated by commas."),
    ("--help", "Print this usage."),
    ("--index-sanity-check", "Only check each index as a broker checks it at startup."),
    ("--key-decoder-class [String]", "How to print keys: org.apache.kafka.tools.api.StringDecoder (the default), "
                                     "IntegerDecoder, LongDecoder or DefaultDecoder."),
    ("--max-bytes <Integer: size>", "Read at most this many bytes of each log. (default: 2147483647)"),
    ("--max-message-size <Integer: size>", "Largest batch read where an index entry points. (default: 5242880)"),
    ("--offsets-decoder", "Decode records as __consumer_offsets records (implies --print-data-log)."),
    ("--print-data-log", "Print keys and values of records (implies --deep-iteration), raw as Kafka's tool prints "
                         "them, control characters and escape sequences included (`kafkacodec dump` escapes them)."),
    ("--remote-log-metadata-decoder", "Decode records as __remote_log_metadata records (tiered storage; implies "
                                      "--print-data-log)."),
    ("--share-group-state-decoder", "Decode records as __share_group_state records (implies --print-data-log)."),
    ("--skip-record-metadata", "Print only the keys and values of records, no metadata."),
    ("--transaction-log-decoder", "Decode records as __transaction_state records (implies --print-data-log)."),
    ("--value-decoder-class [String]", "How to print values; as --key-decoder-class."),
    ("--verify-index-only", "Check index entries against the log without printing them."),
    ("--version", "Print the version and exit."),
]
# Kafka's order of precedence when several are given
DECODERS = ("offsets-decoder", "transaction-log-decoder", "cluster-metadata-decoder", "remote-log-metadata-decoder",
            "share-group-state-decoder")


class UsageProblem(Exception):
    def __init__(self, message: str, with_help: bool = False):
        super().__init__(message)
        self.with_help = with_help


def parse(args: list[str]) -> dict[str, object]:
    """The options given, by name; values as the strings given (converted when used, as Kafka's
    tool converts them)."""
    found: dict[str, object] = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            break
        if not token.startswith("-") or token == "-":
            continue  # an argument that is no option is ignored
        name, _, inline = token.lstrip("-").partition("=")
        if name not in FLAGS + WITH_VALUE + OPTIONAL_VALUE:
            shown = name if token.startswith("--") else name[:1]
            raise UsageProblem(f"{shown} is not a recognized option")
        if name in FLAGS:
            found[name] = True
            continue
        if "=" in token:
            value = inline
        elif name in WITH_VALUE:
            if i >= len(args):
                raise UsageProblem(f"Option {name} requires an argument")
            value, i = args[i], i + 1  # taken even when it looks like an option, as joptsimple takes it
        elif i < len(args) and not args[i].startswith("-"):
            value, i = args[i], i + 1
        else:
            value = None
        if name in found and name == "files":
            raise UsageProblem("Found multiple arguments for option files, but you asked for only one")
        found[name] = value
    return found


def _help() -> str:
    width = max(len(o) for o, _ in HELP) + 2
    rows = [f"{'Option':<{width}}Description", f"{'------':<{width}}-----------"]
    rows += [f"{option:<{width}}{text}" for option, text in HELP]
    return "\n".join(rows)


def options_from(found: dict) -> "tuple[list[str], object]":
    from kafkacodec.storage.dump_log import parsers
    from kafkacodec.storage.dump_log.common import INT32_MAX, MAX_MESSAGE_SIZE, Options

    chosen = next((name for name in DECODERS if found.get(name)), None)
    if chosen is not None:
        parser = parsers.named(chosen.removesuffix("-decoder"))
    else:
        parser = parsers.classes(found.get("key-decoder-class"), found.get("value-decoder-class"))
    print_data = bool(found.get("print-data-log") or "key-decoder-class" in found or "value-decoder-class" in found
                      or chosen is not None)
    opts = Options(deep=print_data or bool(found.get("deep-iteration")), print_data=print_data,
                   skip_metadata=bool(found.get("skip-record-metadata")),
                   verify_index_only=bool(found.get("verify-index-only")),
                   index_sanity_check=bool(found.get("index-sanity-check")),
                   max_bytes=found.get("max-bytes", INT32_MAX),
                   max_message_size=found.get("max-message-size", MAX_MESSAGE_SIZE), parser=parser)
    files = str(found["files"]).split(",")
    while files and files[-1] == "":  # Java's String.split drops trailing empty strings
        files.pop()
    return files, opts


def _raw_args(ctx: click.Context) -> list[str]:
    """The arguments after the command's name as typed: click drops a `--`, which ends Kafka's
    options (what follows is ignored, whatever it looks like)."""
    argv = sys.argv[1:]
    if ctx.info_name in argv:
        return argv[argv.index(ctx.info_name) + 1:]
    return list(ctx.args)


@click.command("dump-log", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                             "help_option_names": []}, add_help_option=False)
@click.pass_context
def dump_log(ctx: click.Context) -> None:
    """Kafka 4.1's kafka-dump-log, with its options (`--files a.log,b.index ...`) and its output.

    Names, keys and values are printed raw, as Kafka's tool prints them, control characters and
    escape sequences included; `kafkacodec dump` escapes them. Run `kafkacodec dump-log --help`
    for the options."""
    from kafkacodec.storage.dump_log import tool
    from kafkacodec.storage.dump_log.common import Crash, Reports
    from kafkacodec.storage.diskio.safeio import FileProblem

    args = _raw_args(ctx)
    try:
        found = parse(args)
        if not args or found.get("help"):
            raise UsageProblem(DESCRIPTION, with_help=True)
        if found.get("version"):
            from importlib.metadata import version
            click.echo(version("kafkacodec"))
            sys.exit(0)
        if found.get("files") is None:
            raise UsageProblem('Missing required argument "[files]"', with_help=True)
    except UsageProblem as err:
        click.echo(str(err), err=True)
        if err.with_help:
            click.echo(_help(), err=True)
        sys.exit(1)
    files, opts = options_from(found)
    reports = Reports()
    try:
        for arg in files:
            for stream, line in tool.dump_file(arg, opts, reports):
                click.echo(line, err=stream == "err")
    except (Crash, FileProblem) as err:  # Kafka's run ends at its first exception, without the reports
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    for line in reports.lines():
        click.echo(line, err=True)

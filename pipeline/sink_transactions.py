"""What the kafka-log sink says of a partition it wrote whose transactions stay open: a read
leaves transaction markers out unless includeControlRecords=true, so its rows written back
make every transaction open, and read_committed consumers of the copy stop before the first.
The writer's last producer-state snapshot of the gathered partition tells which are open."""
from __future__ import annotations

from pathlib import Path

from kafkacodec.storage.layout import names
from kafkacodec.storage.state.producers import ProducerState, read_snapshot


def open_transactions(directory: Path) -> list[tuple[int, int]]:
    """(producer id, first offset) of each transaction open at the end of the partition written
    in `directory`, by first offset."""
    snapshots = sorted(directory.glob("*" + names.SNAPSHOT))
    if not snapshots:
        return []
    last = max(snapshots, key=lambda p: int(p.stem))
    return ProducerState.from_snapshot(read_snapshot(last), int(last.stem)).open_transactions()


def left_open(name: str, directory: Path) -> str | None:
    """The warning for the partition `name` written in `directory`, or None."""
    txns = open_transactions(directory)
    if not txns:
        return None
    which = " and ".join(f"of producer {pid} from offset {first}" for pid, first in txns)
    plural = "s" if len(txns) > 1 else ""
    return (f"{name}: the rows written leave the transaction{plural} {which} without a marker, so read_committed "
            f"consumers stop before offset {txns[0][1]}; a kafka-log read gives them only with "
            "includeControlRecords=true")

"""A long fuzz run outside pytest: `python tests/fuzz_long.py 1000000`. The same seeds, mutations
and checks as test_fuzz.py, driven by a seeded random generator instead of hypothesis (cheaper per
input); any exception other than DecodeError, or an input taking over 5 s, is printed and counted.
"""
import random
import signal
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafkacodec.runtime.errors import DecodeError  # noqa: E402

from test_fuzz import SEEDS, exercise, mutate  # noqa: E402

KINDS = ("flip", "set", "cut", "insert", "splice")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def main(total: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    failures = hangs = decode_errors = 0
    started = time.time()
    for n in range(total):
        name, cls, data = SEEDS[n % len(SEEDS)]
        ops = [(rng.choice(KINDS), rng.randrange(1 << 16), rng.randrange(1 << 31)) for _ in range(rng.randint(1, 4))]
        signal.alarm(5)
        try:
            exercise(cls, mutate(data, ops))
        except DecodeError:
            decode_errors += 1
        except Hang:
            hangs += 1
            print(f"hang: {name} {ops}", flush=True)
        except Exception:  # noqa: BLE001 - what the run is looking for
            failures += 1
            print(f"failure: {name} {ops}\n{traceback.format_exc()}", flush=True)
        finally:
            signal.alarm(0)
    print(f"{total} inputs over {len(SEEDS)} seeds in {time.time() - started:.0f} s: {decode_errors} raised "
          f"DecodeError, {failures} other exceptions, {hangs} hangs")
    return 1 if failures or hangs else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))

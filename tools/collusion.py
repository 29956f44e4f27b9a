#!/usr/bin/env python3
"""Measures how fast two colluding bots in two sandboxed matches can signal each
other (docs: Security, Known limits). Runs two `referee match --sandbox require`
side by side, the sender in one and the receiver in the other
(fixtures/bots/collude.py), for each channel and slot length, and prints the bit
rate and the share of bits received wrong.

Usage: python3 tools/collusion.py REFEREE [BITS]   (BITS random bits per run; 128)
"""

import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOT = os.path.join(HERE, "..", "fixtures", "bots", "collude.py")


def run(referee, channel, slot_ms, bits):
    start = time.time() + 3.0
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for role in ("send", "recv"):
            cmd = " ".join(["python3", os.path.abspath(BOT), role, channel, str(slot_ms),
                            "%.3f" % start, bits, referee])
            logs = os.path.join(tmp, role)
            procs.append(subprocess.Popen(
                [referee, "match", "--game", "telka", "--sandbox", "require", "-q",
                 "--startup-timeout", "600", "--fill", "random", "--log-dir", logs,
                 "--record", os.path.join(tmp, role + ".jsonl"), "--agent", cmd],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for p in procs:
            p.wait()
        with open(os.path.join(tmp, "recv", "seat1.stderr")) as f:
            got = [l.split()[1] for l in f if l.startswith("GOT ")][0]
    wrong = sum(a != b for a, b in zip(got, bits))
    return len(bits) / (len(bits) * slot_ms / 1000.0), wrong / len(bits)


def main():
    referee = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    rng = random.Random(1)
    print("channel  slot ms  bits/s  wrong")
    for channel, slots in (("flock", (2, 5, 20)), ("cpu", (10, 50, 200))):
        for slot in slots:
            bits = "".join(rng.choice("01") for _ in range(n))
            rate, wrong = run(referee, channel, slot, bits)
            print("%-7s  %7d  %6.0f  %5.1f%%" % (channel, slot, rate, 100 * wrong))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks `events <seat>` against what a real `referee match` sends its agents.

For each game it plays a random game to its end through `referee_client.Referee`,
taking for every seat what `events <seat>` returns before each of its decisions and
once more at the end. It saves the game's record (`record`), then plays the same
actions in a real match: every seat's agent is `referee agent replay RECORD`, and
`--log-dir` keeps each agent's transcript. The `event`, `view` and `gameover` lines
the transcript shows sent before each `go` (and before `gameover`) must be, seat by
seat and decision by decision, the lines the client was given.

    python3 events_match_transcript.py --referee path/to/referee --seed 1

Prints one line per game and `ok` at the end; exits 1 at the first difference.
"""

import argparse
import os
import random
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from referee_client import Referee  # noqa: E402

# max-plies keeps random games short; a match ends them the same way.
SETUPS = [
    ("pegchow", {"players": 4, "max-plies": 200}),
    ("telka", {"players": 3, "max-plies": 200}),
    ("idoubtit", {"max-plies": 150}),
    ("multichess", {"players": 3, "max-plies": 300}),
]


def play_and_collect(ref, rng, game, options):
    """Plays `game` randomly to its end; returns the options in force, per seat the
    `events` answers in order (one before each decision, one at the end), and how
    many forced passes were played."""
    in_force = ref.new(game, **options)["options"]
    seats = in_force.get("players", 2)
    told = {seat: [] for seat in range(1, seats + 1)}
    forced = 0
    while True:
        turn = ref.turn()
        if turn is None:
            break
        seat, legal = turn["seat"], ref.legal()
        # A forced pass is played by the referee in a match: no agent is asked.
        if legal != ["pass"]:
            told[seat].append(ref.events(seat))
        else:
            forced += 1
        ref.play(seat, rng.choice(legal))
    for seat in told:
        told[seat].append(ref.events(seat))
    return in_force, told, forced


def sent_before_each_decision(transcript):
    """The `event`, `view` and `gameover` lines a transcript shows sent to the agent
    (its `> ` lines), one group per `go` and one ending with `gameover`."""
    groups = [[]]
    for line in transcript.splitlines():
        if not line.startswith("> "):
            continue
        line = line[2:]
        if line.startswith(("event ", "view ", "gameover ")):
            groups[-1].append(line)
        if line.startswith(("go ", "gameover ")):
            groups.append([])
    return groups[:-1]


def run_match(referee, game, options, seats, record, directory):
    """Plays `record` again in a real match; returns each seat's transcript."""
    logs = os.path.join(directory, "logs")
    agent = f"{shlex.quote(referee)} agent replay {shlex.quote(record)}"
    command = [referee, "match", "--game", game, "-q", "--seed", "1", "--st", "10"]
    for key, value in sorted(options.items()):
        command += ["-o", f"{key}={value}"]
    command += ["--agent", agent] * seats
    command += ["--sandbox", "none", "--log-dir", logs]
    command += ["--record", os.path.join(directory, "match.jsonl")]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{game}: the match failed ({done.returncode}): {done.stderr.strip()}")
    transcripts = {}
    for seat in range(1, seats + 1):
        with open(os.path.join(logs, f"seat{seat}.transcript")) as f:
            transcripts[seat] = f.read()
    return transcripts


def compare(game, seat, collected, sent):
    """Exits, naming the first group of lines that differs, unless the two agree."""
    for n, (got, expected) in enumerate(zip(collected, sent), start=1):
        if got != expected:
            when = "at the end" if n == len(collected) else f"before decision {n}"
            sys.exit(
                f"{game}: seat {seat}, {when}:\n"
                f"  `events {seat}` gave     {got}\n"
                f"  the match sent its agent {expected}"
            )
    if len(collected) != len(sent):
        sys.exit(
            f"{game}: seat {seat}: the client asked `events` {len(collected)} times, "
            f"the match sent its agent {len(sent)} groups of lines"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--referee", default="referee", help="the referee program")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    # The agents start in the match's directory: name the program absolutely.
    referee = os.path.abspath(args.referee) if os.sep in args.referee else args.referee
    rng = random.Random(args.seed)
    with Referee(referee) as ref, tempfile.TemporaryDirectory() as directory:
        for game, options in SETUPS:
            in_force, told, forced = play_and_collect(ref, rng, game, options)
            here = os.path.join(directory, game)
            os.mkdir(here)
            record = os.path.join(here, "game.jsonl")
            ref.record(record)
            sent = run_match(referee, game, in_force, len(told), record, here)
            for seat in told:
                compare(game, seat, told[seat], sent_before_each_decision(sent[seat]))
            decisions = sum(len(groups) - 1 for groups in told.values())
            setup = " ".join(f"{key}={value}" for key, value in options.items())
            note = f" ({forced} forced passes)" if forced else ""
            print(f"{game} {setup}: {decisions} decisions of {len(told)} seats match the transcripts{note}")
    print("ok")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Plays random games of every game through `referee_client.Referee` and checks
`undo` against replays from the start: after every `undo`, a second game set up
from scratch with the actions that remain must have the same state and give every
seat the same information state.

    python3 random_games.py --referee path/to/referee --seed 1 --plies 60

Prints one line per game and `ok` at the end; exits 1 at the first mismatch.
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from referee_client import Referee  # noqa: E402

SETUPS = [
    ("pegchow", {"players": 4}),
    ("telka", {"players": 3}),
    ("idoubtit", {}),
    ("idoubtit", {"variant": 9}),
    ("multichess", {"players": 3}),
]


def replayed(ref, game, options, history):
    """The state and information states of `history` played from the start in a
    game of its own; the current game is `main` again afterwards."""
    ref.new(game, name="replay", **options)
    for kind, seat, action in history:
        if kind == "play":
            ref.play(seat, action)
        else:
            ref.resign(seat)
    told = [ref.information_state(s) for s in seat_list(ref)]
    state = ref.state()
    ref.use("main")
    return state, told


def seat_list(ref):
    """The seats of the current game, from its `newgame` line."""
    words = ref.information_state(1).split(" | ")[0].split()
    return list(range(1, int(words[words.index("seats") + 1]) + 1))


def check(ref, game, options, history):
    """The current game is the replay of `history` from its start."""
    state, told = replayed(ref, game, options, history)
    if ref.state() != state:
        sys.exit(f"{game} {options}: after undo the state is {ref.state()!r}, a replay gives {state!r}")
    mine = [ref.information_state(s) for s in seat_list(ref)]
    if mine != told:
        sys.exit(f"{game} {options}: information states differ from a replay after undo")


def play_one(ref, rng, game, options, plies):
    """One random game with undos of random length; returns the undos done."""
    ref.new(game, name="main", **options)
    history, undos = [], 0
    for _ in range(plies):
        turn = ref.turn()
        if turn is None:
            break
        seat = turn["seat"]
        if rng.random() < 0.02:
            ref.resign(seat)
            history.append(("resign", seat, None))
        else:
            action = rng.choice(ref.legal())
            ref.play(seat, action)
            history.append(("play", seat, action))
        if history and rng.random() < 0.15:
            n = rng.randint(1, min(len(history), 5))
            ref.undo(n)
            del history[-n:]
            undos += 1
            check(ref, game, options, history)
    check(ref, game, options, history)
    return undos


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--referee", default="referee", help="the referee program")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=1, help="games per setup")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with Referee(args.referee) as ref:
        for game, options in SETUPS:
            for _ in range(args.rounds):
                undos = play_one(ref, rng, game, options, args.plies)
                print(f"{game} {options}: {undos} undos checked against replays")
    print("ok")


if __name__ == "__main__":
    main()

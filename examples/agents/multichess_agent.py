#!/usr/bin/env python3
"""A simple bot for Multi-player TelnChes (2 to 8 seats), speaking protocol v1.

Every seat has a private 8x4 area (ranks 1-4) with the usual chess setup, and
all share a public 8x4 area (ranks 5-8) joined to every private rank 4. A seat
sees only part of the others' areas, and a move is accepted when it is legal
on the seat's view with unseen squares taken as empty (R-M4): a sliding piece
that meets a hidden piece stops there and takes it. Capturing a king takes
over that seat's pieces and area (R-M5). This bot takes the most valuable
piece it can, promotes to a queen, and otherwise moves at random. Standard
library only, Python 3.8+. Run it in a match:

    referee match --game multichess -o players=4 --agent "python3 multichess_agent.py"

The protocol (protocol.md, section 1) in brief: one command per line on stdin,
one answer per line on stdout, flushed at once; stderr is only logged. Before
each `go move` comes the seat's whole view (protocol.md 3.4), e.g. with 2 seats

    <public> <area 1> <area 2> <to-move> <plies> <owners> <castling> <out>

each area written as 4 ranks from the top, `/`-separated, 8 cells each: `.`
empty, `?` unseen, or a type and its owner's seat (`R1`). Squares are named
`e5` (public) or `2:e1` (seat 2's area), moves `1:e2-1:e4`, `e5-2:d3`,
`b7-b8=Q`, castling `1:e1-1:g1`. When a seat has no move at all the referee
plays `pass` for it (so `go` then never comes; we would answer `pass` too).
"""

import random
import sys

KING = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
KNIGHT = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
ROOK = [(1, 0), (-1, 0), (0, 1), (0, -1)]
BISHOP = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
SLIDES = {"R": ROOK, "B": BISHOP, "Q": ROOK + BISHOP}
VALUE = {"K": 100, "Q": 9, "R": 5, "B": 3, "N": 3, "P": 1}


# ---------------------------------------------------------------------------
# Squares and the view
# ---------------------------------------------------------------------------
# A square is (area, file, rank): area 0 is the public area, area k seat k's
# private one; files 0..7 (a..h); ranks 0..7 counted the same way everywhere,
# 0..3 in a private area (ranks 1-4), 4..7 in the public area (ranks 5-8).


def name(sq):
    """'e5' for (0, 4, 4), '2:e1' for (2, 4, 0)."""
    area, file, rank = sq
    text = "abcdefgh"[file] + str(rank + 1)
    return text if area == 0 else "%d:%s" % (area, text)


def step(sq, df, dr, private):
    """The square (df, dr) away on the board a move is traced on: the public
    area plus at most one private area (`private`, or None for none); None
    when that leaves the board. Going down from rank 5 enters `private`."""
    area, file, rank = sq
    file, rank = file + df, rank + dr
    if not (0 <= file < 8 and 0 <= rank < 8):
        return None
    if rank >= 4:
        return (0, file, rank)
    return None if private is None else (private, file, rank)


class View:
    """A parsed view: `board` maps squares to (type, owner seat) for the pieces
    we see; unseen squares (`?`) are simply absent, that is taken as empty (as
    R-M4 judges moves). `me` is the seat to move, `castling` the rights of our
    own area ('KQ', 'K', 'Q' or '-')."""

    def __init__(self, text):
        fields = text.split()
        self.seats = len(fields) - 6
        self.board = {}
        for area in range(self.seats + 1):
            top = 7 if area == 0 else 3  # the first rank written is the top one
            for row, cells in enumerate(fields[area].split("/")):
                file = 0
                while cells:
                    if cells[0] in ".?":
                        cells = cells[1:]
                    else:  # a type letter and a one-digit seat number
                        self.board[(area, file, top - row)] = (cells[0], int(cells[1]))
                        cells = cells[2:]
                    file += 1
        self.me = int(fields[self.seats + 1])
        self.castling = fields[self.seats + 4].split(",")[self.me - 1]


# ---------------------------------------------------------------------------
# Move generation (R-M1, R-M4)
# ---------------------------------------------------------------------------


def moves(v):
    """Every move legal on our view, as (from, to, promotion) triples."""
    out = []
    for sq, (kind, owner) in sorted(v.board.items()):
        if owner != v.me:
            continue
        # A move from a private area stays on that area plus the public one; a
        # move from the public area may end in the public area or go down into
        # any one private area (areas of seats that are out included).
        areas = [sq[0]] if sq[0] else [None] + list(range(1, v.seats + 1))
        for private in areas:
            for to in destinations(v, sq, kind, private):
                if sq[0] == 0 and private is not None and to[0] == 0:
                    continue  # already listed with private = None
                if kind == "P" and to[2] == 7:  # public rank 8: promotion is compulsory
                    out += [(sq, to, p) for p in "QRBN"]
                else:
                    out.append((sq, to, ""))
    return out


def spell(move):
    """The R-M2 text of a move: '1:e2-1:e4', 'b7-b8=Q'."""
    frm, to, promotion = move
    return name(frm) + "-" + name(to) + ("=" + promotion if promotion else "")


def destinations(v, sq, kind, private):
    """Squares the piece of ours on `sq` may go to on the board of `private`
    plus the public area. Forward is towards rank 8 for every seat."""
    free = lambda s: s is not None and s not in v.board
    enemy = lambda s: s in v.board and v.board[s][1] != v.me
    out = []
    if kind == "P":
        one = step(sq, 0, 1, private)
        if free(one):
            out.append(one)
            two = step(one, 0, 1, private)
            if sq[0] != 0 and sq[2] == 1 and free(two):  # rank 2 of any private area
                out.append(two)
        return out + [s for s in (step(sq, -1, 1, private), step(sq, 1, 1, private)) if enemy(s)]
    if kind in "KN":
        for df, dr in KING if kind == "K" else KNIGHT:
            s = step(sq, df, dr, private)
            if free(s) or enemy(s):
                out.append(s)
        return out + (castlings(v, sq) if kind == "K" else [])
    for df, dr in SLIDES[kind]:
        s = step(sq, df, dr, private)
        while free(s):
            out.append(s)
            s = step(s, df, dr, private)
        if enemy(s):
            out.append(s)
    return out


def castlings(v, sq):
    """Castling (R-M1): the king on e1 of our own area, the right still held,
    our rook in the corner and the squares between empty. There is no check."""
    me = v.me
    if sq != (me, 4, 0):
        return []
    out = []
    for side, rook, between, to in (("K", 7, (5, 6), 6), ("Q", 0, (1, 2, 3), 2)):
        if (side in v.castling and v.board.get((me, rook, 0)) == ("R", me)
                and all((me, f, 0) not in v.board for f in between)):
            out.append((me, to, 0))
    return out


# ---------------------------------------------------------------------------
# Choosing
# ---------------------------------------------------------------------------


def choose(v, rng):
    """Takes the most valuable piece we can see, else promotes to a queen, else
    plays any move at random; 'pass' when there is no move at all."""

    def score(move):
        target = v.board.get(move[1])  # never our own piece
        return (VALUE[target[0]] * 10 if target else 0) + 5 * (move[2] == "Q") + rng.random()

    legal = moves(v)
    return spell(max(legal, key=score)) if legal else "pass"


# ---------------------------------------------------------------------------
# The agent protocol
# ---------------------------------------------------------------------------


def send(line):
    """Writes one line to the referee and flushes at once (never buffer!)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def play(rng):
    """Answers the referee's commands on stdin until `quit` or end of input."""
    view = None
    for raw in iter(sys.stdin.readline, ""):
        words = raw.split()
        if not words:
            continue
        command = words[0]
        if command == "protocol":
            send("id name multichess_agent.py")
            send("id author the referee example bots")
            send("protocolok")
        elif command == "isready":
            send("readyok")
        elif command == "view":
            view = View(raw.split(None, 1)[1].strip())
        elif command == "go":
            send("bestmove " + (choose(view, rng) if view else "pass"))
        elif command == "gameover":
            sys.stderr.write("multichess_agent: " + raw)  # stderr is only logged
        elif command == "quit":
            return
        # `newgame` and `event` tell us nothing the view does not; anything
        # else is ignored, as the protocol asks.


def main(argv):
    """Command line: [--seed N]; or the check mode used by the tests, --list:
    for each view line on stdin, print a line of its legal moves, sorted."""
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else None
    if "--list" in argv:
        for line in sys.stdin:
            legal = [spell(m) for m in moves(View(line.strip()))]
            print(" ".join(sorted(legal or ["pass"])))
        return
    play(random.Random(seed))


if __name__ == "__main__":
    main(sys.argv[1:])

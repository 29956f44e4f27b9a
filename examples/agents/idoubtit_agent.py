#!/usr/bin/env python3
"""A simple bot for I-Doubt-It TelnChes (all 16 variants), speaking protocol v1.

In I-Doubt-It nobody sees every piece type: the referee accepts any well-formed
action (R-D4), and the opponent may `doubt` it; a doubt undoes an incorrect
action, but costs the doubter its turn if the action was correct (R-D6). This
bot plays correct moves with the pieces whose types it sees, plausible ones
with the pieces it cannot see, doubts what it can prove wrong, and contests a
king capture unless it knows the capture was correct. Standard library only,
Python 3.8+. Run it in a match:

    referee match --game idoubtit -o variant=9 --agent "python3 idoubtit_agent.py"

The protocol (protocol.md, section 1) in brief: one command per line on stdin,
one answer per line on stdout, flushed at once; stderr is only logged. Before
each `go place|move|respond` comes the seat's whole view (protocol.md 3.2):

    3x4/8/8/8/8/8/8/4K3 place w - - QRRBBNNPPPPPPPP #15 0 -

board (ranks from the top; `X`/`x`: a White/Black piece of a type we may not
see), phase, side to act, both benches, both supplies (`#n`: types unseen),
play-phase actions, en-passant square, and `| <actor> <action>` while the last
move or drop may be doubted.

`variant = d + 4*s + 8*b`: d = drop mode (0: none), s = 1: each side places
the opponent's pieces (on the opponent's rows), b = 1: shogi board. Squares
are (file, rank) pairs from (0, 0) = a1; White moves up the board.
"""

import copy
import random
import sys

# How each type moves (R-D5): (steps, slides) as (file, rank) offsets, the rank
# counted forward for the piece's owner. The chess pawn is handled apart.
ORTHO = [(1, 0), (-1, 0), (0, 1), (0, -1)]
DIAG = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
GOLD = [(0, 1), (1, 1), (-1, 1), (1, 0), (-1, 0), (0, -1)]
CHESS = {"K": (ORTHO + DIAG, []), "Q": ([], ORTHO + DIAG), "R": ([], ORTHO), "B": ([], DIAG),
         "N": ([(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)], [])}
SHOGI = {"K": (ORTHO + DIAG, []), "R": ([], ORTHO), "B": ([], DIAG), "G": (GOLD, []),
         "S": ([(0, 1), (1, 1), (-1, 1), (1, -1), (-1, -1)], []), "N": ([(1, 2), (-1, 2)], []),
         "L": ([], [(0, 1)]), "P": ([(0, 1)], []), "+R": (DIAG, ORTHO), "+B": (ORTHO, DIAG),
         "+S": (GOLD, []), "+N": (GOLD, []), "+L": (GOLD, []), "+P": (GOLD, [])}
OTHER = {"w": "b", "b": "w"}  # the opponent of a side


# ---------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------


def name(sq):  # (4, 3) -> 'e4'
    return "abcdefghi"[sq[0]] + str(sq[1] + 1)


def square(text):  # 'e4' -> (4, 3)
    return ord(text[0]) - ord("a"), int(text[1]) - 1


class View:
    """A parsed view (or state) line. `board` maps squares to pieces, each a tuple
    (owner 'w'/'b', type letter or 'X' if unseen, promoted); `benches` and
    `supply` are keyed by 'w'/'b'; `pending` is (actor, action) or None, and
    `pending_capture` whether that action took something."""

    def __init__(self, text):
        parts = text.split(" | ")  # a state's third part, the snapshot, is ignored
        fields = parts[0].split()
        ranks = fields[0].split("/")
        self.n, self.shogi = len(ranks), len(ranks) == 9
        self.board = {}
        for row, rank in enumerate(ranks):
            for file, piece in enumerate(tokens(rank)):
                if piece:
                    self.board[(file, self.n - 1 - row)] = piece
        self.phase, self.side = fields[1], fields[2]
        self.benches = {"w": tokens(fields[3]), "b": tokens(fields[4])}
        self.supply = {"w": fields[5], "b": fields[6]}  # letters, '#n' or '-'
        self.ep = None if fields[8] == "-" else square(fields[8])
        # The pending part: `<actor> <action>[ capture <square>]` in a view.
        words = parts[1].split() if len(parts) > 1 else []
        self.pending = tuple(words[:2]) if words else None
        self.pending_capture = "capture" in words

    def rel(self, side, rank):
        """The rank counted from `side`'s own back rank (0 = its first rank)."""
        return rank if side == "w" else self.n - 1 - rank

    def squares(self):
        return [(f, r) for r in range(self.n) for f in range(self.n)]


def tokens(text):
    """The pieces of a rank or bench: `[+]<letter>['][^][_]`, a digit n standing
    for n empty squares (None). The marks after the letter (captured, revealed)
    do not matter to this bot."""
    out, promoted = [], False
    for ch in "" if text == "-" else text:
        if ch.isdigit():
            out += [None] * int(ch)
        elif ch == "+":
            promoted = True
        elif ch.isalpha():
            out.append(("w" if ch.isupper() else "b", ch.upper(), promoted))
            promoted = False
    return out


# ---------------------------------------------------------------------------
# Moves: correct ones (R-D5), plausible ones, and all well-formed ones (R-D4)
# ---------------------------------------------------------------------------


def targets(v, frm, piece):
    """Squares the piece on `frm` reaches by correct movement, captures included
    (kings too: there is no check). An unseen type ('X') reaches nothing."""
    owner, kind, promoted = piece
    fwd = 1 if owner == "w" else -1
    f, r = frm
    on = lambda sq: 0 <= sq[0] < v.n and 0 <= sq[1] < v.n
    enemy = lambda sq: sq in v.board and v.board[sq][0] != owner
    out = []
    if kind == "P" and not v.shogi:
        one, two = (f, r + fwd), (f, r + 2 * fwd)
        if on(one) and one not in v.board:
            out.append(one)
            if v.rel(owner, r) == 1 and two not in v.board:
                out.append(two)
        return out + [sq for sq in ((f - 1, r + fwd), (f + 1, r + fwd)) if enemy(sq)]
    steps, slides = (SHOGI if v.shogi else CHESS).get("+" * promoted + kind, ([], []))
    for df, dr in steps:
        sq = (f + df, r + dr * fwd)
        if on(sq) and (sq not in v.board or enemy(sq)):
            out.append(sq)
    for df, dr in slides:
        sq = (f + df, r + dr * fwd)
        while on(sq) and sq not in v.board:
            out.append(sq)
            sq = (sq[0] + df, sq[1] + dr * fwd)
        if enemy(sq):
            out.append(sq)
    return out


def stuck(v, side, kind, sq):
    """Shogi: an unpromoted P or L on the last rank, or N on the last two, could
    never move again (so it must promote there, and may not be dropped there)."""
    last = v.n - 1 - v.rel(side, sq[1])  # 0 on the last rank
    return (kind in "PL" and last == 0) or (kind == "N" and last <= 1)


def suffixes(v, side, piece, frm, to):
    """The correct spellings of a move that correct movement allows: chess pawns
    must promote on the last rank; shogi pieces may promote touching the zone."""
    owner, kind, promoted = piece
    if not v.shogi:
        return ["q", "r", "b", "n"] if kind == "P" and v.rel(side, to[1]) == v.n - 1 else [""]
    zone = v.rel(side, frm[1]) >= v.n - 3 or v.rel(side, to[1]) >= v.n - 3
    out = [] if not promoted and stuck(v, side, kind, to) else [""]
    return out + (["+"] if zone and not promoted and kind in "RBSNLP" else [])


def pawns(v, side, file):
    """How many unpromoted pawns (that we can see) `side` has on `file` (nifu)."""
    return sum(sq[0] == file and p == (side, "P", False) for sq, p in v.board.items())


def correct_actions(v):
    """Every move and drop of the side to act that we know to be correct."""
    me, out = v.side, []
    for frm, piece in sorted(v.board.items()):
        if piece[0] != me:
            continue
        for to in targets(v, frm, piece):
            out += [name(frm) + name(to) + s for s in suffixes(v, me, piece, frm, to)]
        # En passant: a pawn one step diagonally forward onto the passed square,
        # behind an enemy pawn (which we must see to be sure).
        fwd = 1 if me == "w" else -1
        if v.ep and piece[1] == "P" and not v.shogi and v.ep not in v.board:
            victim = v.board.get((v.ep[0], v.ep[1] - fwd))
            if v.ep[1] - frm[1] == fwd and abs(v.ep[0] - frm[0]) == 1 and victim == (OTHER[me], "P", False):
                out.append(name(frm) + name(v.ep) + "ep")
    for slot, (_, kind, promoted) in enumerate(v.benches[me], 1):
        if v.shogi and kind == "X":
            continue  # unseen: see plausible_actions
        for to in v.squares():
            bad = v.shogi and (stuck(v, me, kind, to) or (kind == "P" and pawns(v, me, to[0])))
            if to not in v.board and not bad:  # chess drops are always correct
                out.append("%d@%s" % (slot, name(to)))
    return out


def plausible_actions(v):
    """Moves for pieces we cannot see that most types could make: one step
    forward (in chess onto an empty square, or diagonally forward onto an enemy,
    which all suits a pawn), promoting where a pawn would have to; and drops of
    unseen shogi bench pieces away from the last two ranks."""
    me, out = v.side, []
    fwd = 1 if me == "w" else -1
    for (f, r), piece in sorted(v.board.items()):
        if piece[0] != me or piece[1] != "X" or not 0 <= r + fwd < v.n:
            continue
        last = v.rel(me, r + fwd) == v.n - 1
        for to in [(f, r + fwd)] + ([] if v.shogi else [(f - 1, r + fwd), (f + 1, r + fwd)]):
            here = v.board.get(to)
            if v.shogi or to[0] == f:
                ok = here is None or (v.shogi and here[0] != me)
            else:
                ok = 0 <= to[0] < v.n and here is not None and here[0] != me
            if ok:
                out.append(name((f, r)) + name(to) + ("+" if v.shogi else "q") * last)
    for slot, (_, kind, _) in enumerate(v.benches[me], 1):
        if v.shogi and kind == "X":
            out += ["%d@%s" % (slot, name(sq)) for sq in v.squares()
                    if sq not in v.board and v.rel(me, sq[1]) < v.n - 2 and not pawns(v, me, sq[0])]
    return out


def well_formed_actions(v, swapped):
    """Every well-formed action of the side to act: what the referee's `legal`
    lists. Anything else would forfeit the game, so we only ever pick from here."""
    me = v.side
    if v.phase == "respond":
        return ["doubt", "accept"]
    if v.phase == "place":  # any type left in the supply, any empty home square
        owner = OTHER[me] if swapped else me
        home = [sq for sq in v.squares() if v.rel(owner, sq[1]) < (3 if v.shogi else 2)]
        kinds = sorted(set(v.supply[owner])) if v.supply[owner][0] not in "#-" else []
        return [k + "@" + name(sq) for k in kinds for sq in home if sq not in v.board]
    if v.phase != "play":
        return []
    out = ["doubt"] if v.pending and v.pending[0] != me else []
    for frm, piece in sorted(v.board.items()):
        if piece[0] != me:
            continue
        for to in v.squares():
            if to == frm or v.board.get(to, ("",))[0] == me:
                continue
            out.append(name(frm) + name(to))
            if not v.shogi and v.rel(me, to[1]) == v.n - 1:
                out += [name(frm) + name(to) + p for p in "qrbn"]
            if v.shogi and max(v.rel(me, frm[1]), v.rel(me, to[1])) >= v.n - 3:
                out.append(name(frm) + name(to) + "+")
        if v.ep and v.ep not in v.board:  # any piece may *claim* en passant
            out.append(name(frm) + name(v.ep) + "ep")
    for slot in range(1, len(v.benches[me]) + 1):
        out += ["%d@%s" % (slot, name(sq)) for sq in v.squares() if sq not in v.board]
    return out


# ---------------------------------------------------------------------------
# Doubting and choosing
# ---------------------------------------------------------------------------


def judge(v):
    """Whether the opponent's pending action was incorrect (True), correct
    (False), or we cannot tell (None), from the types we see."""
    actor, action = v.pending
    captured = v.pending_capture
    if "@" in action:  # a drop: only shogi drops can be incorrect
        to = square(action.split("@")[1])
        _, kind, _ = v.board[to]
        if not v.shogi:
            return False
        if kind == "X":
            return None
        return stuck(v, actor, kind, to) or (kind == "P" and pawns(v, actor, to[0]) > 1)
    frm, to, suffix = square(action[0:2]), square(action[2:4]), action[4:]
    piece = v.board.get(to)
    if piece is None or piece[1] == "X" or suffix in ("q", "r", "b", "n", "?", "ep"):
        return None  # unseen, or the type before a chess promotion is unknown
    if suffix == "+":  # unpromoted after `+`: a K or G, which cannot promote;
        return None if piece[2] else True  # else: was it promoted already?
    # Put the board back as it was: the piece on `frm`, and on `to` one of ours
    # if something was taken there.
    before = copy.copy(v)
    before.board = dict(v.board)
    del before.board[to]
    before.board[frm] = piece
    if captured:
        before.board[to] = (OTHER[actor], "X", False)
    return to not in targets(before, frm, piece) or "" not in suffixes(before, actor, piece, frm, to)


def choose_placement(v, swapped, rng, legal):
    """Our own pieces: king on the back row, pawns in front. The opponent's
    (s = 1): its king on its front row, where we can reach it."""
    owner = OTHER[v.side] if swapped else v.side
    kind = rng.choice(sorted(set(a[0] for a in legal)))
    front = (kind == "P") if owner == v.side else (kind == "K")
    row = (3 if v.shogi else 2) - 1 if front else 0
    mine = [a for a in legal if a[0] == kind]
    best = [a for a in mine if v.rel(owner, square(a[2:])[1]) == row]
    return rng.choice(best or mine)


def choose(v, swapped, rng):
    """The decision for a `go`, always one of the well-formed actions."""
    legal = well_formed_actions(v, swapped)
    if v.phase == "place":
        return choose_placement(v, swapped, rng, legal)
    verdict = judge(v) if v.pending and v.pending[0] != v.side else None
    if v.phase == "respond":
        # Accepting loses; a doubt loses only if the capture was correct.
        return "accept" if verdict is False else "doubt"
    if verdict:
        return "doubt"
    sure = correct_actions(v)
    allowed = set(legal)
    candidates = [a for a in sure + plausible_actions(v) if a in allowed]

    def score(a):  # take a king we see, take anything, promote; sure beats bold
        target = None if "@" in a else v.board.get(square(a[2:4]))
        value = 0 if target is None else (1000 if target[1] == "K" else 10)
        return value + 3 * (a[4:5] in ("q", "+")) + (a in sure) + rng.random()

    if candidates:
        return max(candidates, key=score)
    return rng.choice([a for a in legal if a != "doubt"])  # nothing plausible: bluff


# ---------------------------------------------------------------------------
# The agent protocol
# ---------------------------------------------------------------------------


def send(line):
    """Writes one line to the referee and flushes at once (never buffer!)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def play(rng):
    """Answers the referee's commands on stdin until `quit` or end of input."""
    swapped, view = False, None
    for raw in iter(sys.stdin.readline, ""):
        words = raw.split()
        if not words:
            continue
        command = words[0]
        if command == "protocol":
            send("id name idoubtit_agent.py")
            send("id author the referee example bots")
            send("protocolok")
        elif command == "isready":
            send("readyok")
        elif command == "newgame":
            options = dict(w.split("=", 1) for w in words[words.index("options") + 1:])
            swapped = int(options.get("variant", "0")) & 4 != 0
        elif command == "view":
            view = View(raw.split(None, 1)[1].strip())
        elif command == "go":
            send("bestmove " + choose(view, swapped, rng))
        elif command == "gameover":
            sys.stderr.write("idoubtit_agent: " + raw)  # stderr is only logged
        elif command == "quit":
            return
        # Anything else is ignored, as the protocol asks.


def main(argv):
    """Command line: [--seed N]; or the check mode used by the tests, --list
    VARIANT: for each view (or state) line on stdin, print a line of its
    well-formed actions and a line of the actions known to be correct, sorted."""
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else None
    if "--list" in argv:
        swapped = int(argv[argv.index("--list") + 1]) & 4 != 0
        for line in sys.stdin:
            v = View(line.strip())
            print(" ".join(sorted(well_formed_actions(v, swapped))))
            print(" ".join(sorted(correct_actions(v) if v.phase == "play" else [])))
        return
    play(random.Random(seed))


if __name__ == "__main__":
    main(sys.argv[1:])

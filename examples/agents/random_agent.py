#!/usr/bin/env python3
"""A random bot for Peg Chow and Telka, speaking the referee's agent protocol v1.

It is meant to be read and adapted: replace `choose_move` with something
smarter and you have your own bot. Standard library only, Python 3.8+.

Run it in a match:

    referee match --game telka --agent "python3 random_agent.py --seed 1"

The protocol (see protocol.md, section 1) in brief: the referee writes one
command per line to our stdin, we answer on stdout, one line each, flushed at
once. Anything written to stderr is only logged by the referee, so debugging
output goes there.

Board (R-B1): 11x11 points, files a..k (x = 0..10), ranks 1..11 (y = 0..10),
every point joined to its 8 neighbours. Each corner holds a 12-point home (its
4x4 block minus the inner 2x2); the other points are the Danger Territory.
"""

import random
import sys

SIZE = 11
FILES = "abcdefghijk"
# The 8 directions a counter may step or leap in.
DIRECTIONS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)]


# ---------------------------------------------------------------------------
# Board helpers
# ---------------------------------------------------------------------------


def point_name(x, y):
    """The R-B9 name of a point: (0, 0) is 'a1', (10, 10) is 'k11'."""
    return FILES[x] + str(y + 1)


def on_board(x, y):
    """Whether (x, y) is one of the 121 points."""
    return 0 <= x < SIZE and 0 <= y < SIZE


def is_home(x, y):
    """Whether (x, y) lies in one of the four corner homes (R-B1).

    Folding the board onto its south-west quarter makes all four corners
    alike: a home is the 4x4 corner block minus its inner 2x2.
    """
    fx, fy = min(x, SIZE - 1 - x), min(y, SIZE - 1 - y)
    return fx < 4 and fy < 4 and not (fx >= 2 and fy >= 2)


def side(colour, players):
    """The side (team) of a colour letter 'b', 'y', 'r' or 'g' (R-B3).

    With 3 players everyone plays alone. Otherwise Blue+Green play against
    Yellow+Red: that is the 4-player teams, the two colours of one seat with
    colors-per-player=2, and (trivially) Blue against Red with 2 players.
    """
    if players == 3:
        return colour
    return "bg" if colour in "bg" else "yr"


def parse_state(text):
    """Parses a state string (R-B9, protocol.md 3.1) into (board, to_move).

    `board` is a dict {(x, y): colour letter} holding only occupied points;
    `to_move` is the letter of the colour to move. Example:
    'yyyy3rrrr/.../bbbb3gggg b 0' -- the ranks from 11 down to 1, runs of
    empty points as numbers, then the colour to move and the move count (and,
    after a forfeit in a 3-player game, an `out=` field we do not need).
    """
    fields = text.split()
    ranks, to_move = fields[0].split("/"), fields[1][0]
    board = {}
    for row, rank in enumerate(ranks):
        y = SIZE - 1 - row  # the first rank written is rank 11
        x, number = 0, ""
        for ch in rank:
            if ch.isdigit():
                number += ch  # a run may have two digits ("11")
                continue
            if number:
                x, number = x + int(number), ""
            board[(x, y)] = ch
            x += 1
    return board, to_move


# ---------------------------------------------------------------------------
# Move generation (R-B4 ... R-B6)
# ---------------------------------------------------------------------------


def legal_moves(board, mover, game, players):
    """Every legal move of colour `mover`, as R-B9 strings ('c2-d3', 'a1-c3-e5').

    A move is either a step to an empty neighbour, or a chain of leaps, each
    over an adjacent counter (any colour) to the empty point just beyond it.
    Every prefix of a chain is a move of its own. Returns ['pass'] when there
    is no move at all (R-B5).
    """
    moves = []
    for (x, y), colour in sorted(board.items()):
        if colour != mover:
            continue
        # Steps: to any empty neighbour.
        for dx, dy in DIRECTIONS:
            if on_board(x + dx, y + dy) and (x + dx, y + dy) not in board:
                moves.append(point_name(x, y) + "-" + point_name(x + dx, y + dy))
        # Leaps: lift the counter off its start while the chain is made (R-B4).
        # (Leaps keep a counter's tint, R-B2, so a chain can never come back
        # next to its start anyway -- but lifting it is the rule as written.)
        del board[(x, y)]
        leap_chains(board, mover, game, players, [(x, y)], moves)
        board[(x, y)] = mover
    return moves or ["pass"]


def leap_chains(board, mover, game, players, path, moves):
    """Depth-first search of leap chains continuing from the end of `path`.

    `path` holds the start and every landing so far; none may be landed on
    again (the start counts as visited). In Telka, leaping an opponent's
    counter standing in the Danger Territory captures it: it leaves the board
    at once (so it cannot be leaped again) and is put back when we backtrack.
    """
    x, y = path[-1]
    for dx, dy in DIRECTIONS:
        over, land = (x + dx, y + dy), (x + 2 * dx, y + 2 * dy)
        if over not in board or not on_board(*land) or land in board or land in path:
            continue
        captured = None
        if game == "telka" and not is_home(*over) and side(board[over], players) != side(mover, players):
            captured = board.pop(over)
        path.append(land)
        moves.append("-".join(point_name(px, py) for px, py in path))
        leap_chains(board, mover, game, players, path, moves)
        path.pop()
        if captured is not None:
            board[over] = captured


def moves_from_view(view, game, options):
    """The legal moves in a view. In these games the view is the state string."""
    board, to_move = parse_state(view)
    players = int(options.get("players", "2"))
    return legal_moves(board, to_move, game, players)


def choose_move(moves, rng):
    """The strategy: pick any legal move, uniformly at random. Replace me!"""
    return rng.choice(moves)


# ---------------------------------------------------------------------------
# The agent protocol
# ---------------------------------------------------------------------------


def send(line):
    """Writes one line to the referee and flushes at once (never buffer!)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def log(text):
    """Debug output: the referee only drains stderr (or saves it with --log-dir)."""
    sys.stderr.write("random_agent: " + text + "\n")
    sys.stderr.flush()


def play(rng):
    """Answers the referee's commands on stdin until `quit` or end of input."""
    game, seat, options, view = None, None, {}, None
    for raw in iter(sys.stdin.readline, ""):  # readline: no read-ahead blocking
        words = raw.split()
        if not words:
            continue
        command = words[0]
        if command == "protocol":  # handshake: `protocol 1`
            send("id name random_agent.py")
            send("id author the referee example bots")
            send("protocolok")
        elif command == "isready":
            send("readyok")
        elif command == "newgame":
            # newgame game <id> seat <n> seats <count> options <key=value>...
            game = words[words.index("game") + 1]
            seat = int(words[words.index("seat") + 1])
            options = dict(w.split("=", 1) for w in words[words.index("options") + 1 :])
            view = None
            log("new game %s as seat %d, options %s" % (game, seat, options))
        elif command == "event":
            pass  # e.g. `event move red k9-i7`; the view already tells us everything
        elif command == "view":
            view = raw.split(None, 1)[1].strip()  # everything after `view`
        elif command == "go":
            # go <place|move|respond> <clock>: only `move` happens in these games.
            moves = moves_from_view(view, game, options) if view else ["pass"]
            send("bestmove " + choose_move(moves, rng))
        elif command == "gameover":
            log(raw.strip())
        elif command == "quit":
            return
        # Anything else (setoption, future commands) is ignored, as the protocol asks.


def main(argv):
    """Command line: [--seed N]; or the hidden check mode used by the tests:
    --legal <game> [key=value...] -- <state>..., printing for each state (one
    argument each) a line of its legal moves, sorted and space-separated."""
    seed = None
    if "--seed" in argv:
        seed = int(argv[argv.index("--seed") + 1])
    if "--legal" in argv:
        start, dashes = argv.index("--legal"), argv.index("--")
        game = argv[start + 1]
        options = dict(w.split("=", 1) for w in argv[start + 2 : dashes])
        for state in argv[dashes + 1 :]:
            print(" ".join(sorted(moves_from_view(state, game, options))))
        return
    play(random.Random(seed))


if __name__ == "__main__":
    main(sys.argv[1:])

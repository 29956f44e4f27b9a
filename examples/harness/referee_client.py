#!/usr/bin/env python3
"""A client for the referee's controller protocol in its JSON form.

`Referee` starts `referee serve --json` and gives every command of the protocol
(protocol.md, section 2) as a method that returns the answer's members, typed as
the JSON says (seats as numbers, action lists as lists, events as dicts). A
refused command raises `RefereeError` with the error's kind and message; the game
is then unchanged. Standard library only, Python 3.8+.

    from referee_client import Referee

    with Referee("referee") as ref:
        ref.new("telka", players=2)
        seat = ref.turn()["seat"]
        ref.play(seat, ref.legal()[0])
        ref.undo()

`random_games.py` beside this file plays random games of every game through it;
`events_match_transcript.py` checks its `events` against a real match's transcripts.
"""

import json
import subprocess


class RefereeError(Exception):
    """A command the referee refused: `kind` is the protocol's error kind."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class Referee:
    """One `referee serve --json` session; every method is one command."""

    def __init__(self, program="referee"):
        self._process = subprocess.Popen(
            [program, "serve", "--json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends the session (`quit`) and waits for the referee to exit."""
        if self._process.poll() is None:
            try:
                self.command("quit")
            except (BrokenPipeError, RefereeError, EOFError):
                pass
            self._process.stdin.close()
            self._process.wait()

    def command(self, *words):
        """Sends one command made of `words` and returns its answer as a dict."""
        line = " ".join(str(w) for w in words)
        if "\n" in line or "\r" in line:
            # A line break would end the command and start another one.
            raise ValueError(f"a command is one line: {line!r}")
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline()
        if not answer:
            raise EOFError(f"the referee ended while answering {line!r}")
        reply = json.loads(answer)
        if not reply["ok"]:
            raise RefereeError(reply["error"]["kind"], reply["error"]["message"])
        return reply

    # Games ------------------------------------------------------------------

    def new(self, game, name=None, state=None, **options):
        """Starts `game` (under `name`, or replacing the current game); options as
        keywords (`players=3`, or `**{"max-plies": 80}`); returns the answer."""
        words = ["new"] + ([name] if name else []) + [game]
        words += [f"{key.replace('_', '-')}={value}" for key, value in sorted(options.items())]
        if state is not None:
            words.append(f"state={state}")
        return self.command(*words)

    def games(self):
        """Every game: dicts with `name`, `game`, `ply` and `current`."""
        return self.command("games")["games"]

    def use(self, name):
        """Makes the game `name` current."""
        self.command("use", name)

    def drop(self, name):
        """Forgets the game `name`."""
        self.command("drop", name)

    def clone(self, source, target):
        """Copies the game `source`, history included, as `target`."""
        self.command("clone", source, target)

    def load(self, path):
        """Loads a record as the current game; returns its ply."""
        return self.command("load", path)["ply"]

    def record(self, path):
        """Writes the current game's record to `path`."""
        self.command("record", path)

    # The current game -------------------------------------------------------

    def turn(self):
        """`{"seat": n, "kind": "place"|"move"|"respond"}`, or None once over."""
        return self.command("turn")["turn"]

    def legal(self):
        """The actions the seat to act may submit."""
        return self.command("legal")["actions"]

    def correct(self):
        """The legal actions a doubt would find correct (omniscient)."""
        return self.command("correct")["actions"]

    def play(self, seat, action):
        """Plays `action` for `seat`; returns the events (dicts with `kind`,
        `args` and `text`)."""
        return self.command("play", seat, action)["events"]

    def resign(self, seat):
        """Resigns `seat`; returns the events."""
        return self.command("resign", seat)["events"]

    def undo(self, n=1):
        """Takes back the last `n` actions and resignations; returns the ply."""
        return self.command("undo", n)["ply"]

    def view(self, seat):
        """The seat's view, as its agent is sent it."""
        return self.command("view", seat)["view"]

    def events(self, seat):
        """The agent protocol lines the seat's agent would have been sent since
        the last call: `event ...` lines, then `view ...` or `gameover ...`."""
        return self.command("events", seat)["lines"]

    def information_state(self, seat):
        """Everything the seat was told, as one string."""
        return self.command("information_state", seat)["information_state"]

    def state(self):
        """The omniscient state string."""
        return self.command("state")["state"]

    def result(self):
        """None while the game goes on, else a dict with `places`, `reason` and
        `text`."""
        return self.command("result")["result"]

    def show(self, seat=None):
        """The board diagram's lines (as `seat` sees it, if given)."""
        words = ["show"] + ([seat] if seat is not None else [])
        return self.command(*words)["diagram"]

"""A stand-in coding agent for integration tests.

Started through a symlink named like the agent (claude, codex, node, ...) so that the kernel's comm
and tmux's pane_current_command carry that name. It paints a fixture screen, sets the pane title
with OSC 2, logs every byte it receives, and repaints whenever the test writes a new fixture path
into the control file. Writing "exit" there (or receiving EOF) ends it.

usage: <agent-name> standin.py CONTROL_FILE KEYLOG_FILE

With STANDIN_AFTER_KEY=FIXTURE in its environment, the first input it receives makes it paint
FIXTURE once, STANDIN_AFTER_KEY_DELAY seconds later (default 0): a slow agent that keeps its old
prompt up for a while after the key, or one that answers a prompt by showing the next.

With STANDIN_PAINT_MARKS=1 it also writes a line "@paint NAME" into the key log each time it paints,
so a reader can tell which screen every key arrived on.
"""
import os
import select
import sys
import termios
import time
import tty


def parse(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head, _, screen = text.partition("\n---\n")
    title = ""
    for line in head.splitlines():
        if line.startswith("# title:"):
            title = line[len("# title:"):].strip(" ")
    return title, screen


def paint(path):
    title, screen = parse(path)
    out = sys.stdout
    out.write("\x1b]2;" + title + "\x07")
    out.write("\x1b[H\x1b[2J\x1b[3J")
    lines = screen.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out.write("\r\n".join(lines))
    out.flush()


def main():
    control, keylog = sys.argv[1], sys.argv[2]
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    tty.setraw(fd)
    last = None
    after = os.environ.get("STANDIN_AFTER_KEY") or None
    delay = float(os.environ.get("STANDIN_AFTER_KEY_DELAY") or "0")
    due = None
    marks = os.environ.get("STANDIN_PAINT_MARKS") == "1"
    try:
        with open(keylog, "ab", buffering=0) as log:
            while True:
                try:
                    want = open(control, encoding="utf-8").read().strip()
                except FileNotFoundError:
                    want = last
                if want == "exit":
                    return
                if want and want != last:
                    paint(want)
                    if marks:
                        log.write(b"\n@paint " + os.path.basename(want).encode() + b"\n")
                    last = want
                if due is not None and time.monotonic() >= due:
                    paint(after)
                    if marks:
                        log.write(b"\n@paint " + os.path.basename(after).encode() + b"\n")
                    after, due = None, None
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready:
                    data = os.read(fd, 1024)
                    if not data:
                        return
                    log.write(data)
                    if after is not None and due is None:
                        due = time.monotonic() + delay
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


if __name__ == "__main__":
    main()

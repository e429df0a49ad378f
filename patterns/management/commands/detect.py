"""``manage.py detect [TEXT] [--file PATH]``: judge one reply, print the verdict as JSON (SPEC §3.3).

The reply comes from the argument, else from ``--file``, else from stdin. The
verdict has the shape of the API's POST /detect (``matches`` included); a blank
reply is an error (``matchedBy: "blank"``); no hit is counted.
"""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from patterns.detection import detect_json


class Command(BaseCommand):
    help = "Judge a reply against the enabled error patterns and print the verdict as JSON."

    def add_arguments(self, parser):
        parser.add_argument("text", nargs="?", help="the reply to judge (default: read --file or stdin)")
        parser.add_argument("--file", dest="path", help="read the reply from this UTF-8 file")

    def handle(self, *args, text=None, path=None, **options):
        if text is not None and path:
            raise CommandError("Give the reply either as TEXT or with --file, not both.")
        if text is None:
            text = self._read(path)
        self.stdout.write(json.dumps(detect_json(text), ensure_ascii=False))

    @staticmethod
    def _read(path):
        try:
            if path:
                with open(path, encoding="utf-8") as handle:
                    return handle.read()
            return sys.stdin.read()
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}.") from None
        except UnicodeDecodeError:
            raise CommandError(f"{path or 'stdin'} is not valid UTF-8 text.") from None

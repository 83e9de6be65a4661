"""The API's JSON body reader: a body that is not JSON is answered with what is wrong and where.

django-ninja wraps whatever its parser raises in a 400 saying only "Cannot parse request body"
(the reason is added in DEBUG alone), so a script sent a comma too many learnt nothing. Our
parser raises `Unreadable` with the reason, and api/errors.py answers the 400 with it.
"""

from __future__ import annotations

import json
from typing import Any, cast

from django.http import HttpRequest
from ninja.parser import Parser

from runtime.flat import NUMBER_TOO_LONG, KeyTwice, keys_once


class Unreadable(Exception):
    """A body that is not JSON the API reads; the message says why, and where."""


# NaN and Infinity are read (JSON has neither): each field that takes a number refuses them by
# name, where a refusal here could only say "the body".
_DECODER = json.JSONDecoder(object_pairs_hook=keys_once)


class BodyParser(Parser):
    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        try:
            text = request.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"the body is not UTF-8 text (byte {exc.start + 1})") from None
        try:
            return cast(dict[str, Any], _DECODER.decode(text))
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            raise Unreadable(f"the body is not JSON: {exc.msg} at {where}") from None
        except RecursionError:
            raise Unreadable("the body is nested too deeply for JSON to read") from None
        except KeyTwice as exc:
            # JSON leaves a key given twice to each reader: a proxy or a log that read the
            # body may have kept the first, where Python keeps the last.
            raise Unreadable(
                f"the body names {exc.key!r} twice in one object: give each key once"
            ) from None
        except ValueError:
            raise Unreadable(f"the body is not JSON we can read: {NUMBER_TOO_LONG}") from None

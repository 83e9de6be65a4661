"""A sentence for the person who pressed a button: a refusal, or what a check found.

htmx asked from a page, so the sentence is a fragment that page swaps in. Without scripts the
button's form was posted plainly, and the answer is a whole page (the navigation, the sentence,
a link back to where the button was), not a bare fragment with no page around it. Both answer
with the refusal's status.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from dashboard.access import HtmxHttpRequest


def tell(
    request: HtmxHttpRequest, text: str, level: str, status: int, back: str, where: str
) -> HttpResponse:
    """`text` at `level` ("error" or "ok"); without htmx on a page linking back to the URL
    `back`, which `where` names ("the run", "the dead letters")."""
    context = {"message": text, "level": level, "back": back, "where": where}
    if request.htmx:
        return render(request, "dashboard/_message.html", context, status=status)
    return render(request, "dashboard/told.html", context, status=status)

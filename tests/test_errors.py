"""One table of user-facing error texts: the commands' error handler and the add-station flow
word each situation the same way (bot.errors), and the add flow keeps the client's detail. The
station client says what went wrong as a Problem and its values; the wording is bot.errors'."""

from __future__ import annotations

import pytest

from bot import errors
from bot.runtime.core import user_message
from bot.station import (
    Problem,
    StationAuthError,
    StationError,
    StationNotFound,
    StationRefused,
    StationResponseError,
    StationUnavailable,
)
from bot.util.i18n import Translator


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (StationAuthError(), errors.STATION_KEY_REFUSED),
        (StationNotFound(Problem.NO_PLAYLIST), errors.STATION_NOT_FOUND),
        (StationUnavailable(), errors.STATION_UNAVAILABLE),
        (
            StationUnavailable(Problem.CONNECTION_REFUSED, server="127.0.0.1:5"),
            errors.STATION_UNAVAILABLE,
        ),
    ],
)
def test_commands_and_the_add_flow_share_one_wording(error: StationError, text: str) -> None:
    assert user_message(error) == text
    assert errors.station_problem(error) == text
    assert errors.station_problem(error, detail=True).startswith(text)


def test_the_add_flow_names_what_the_client_saw_when_it_says_more() -> None:
    refused = StationUnavailable(Problem.CONNECTION_REFUSED, server="127.0.0.1:5")
    assert errors.station_problem(refused, detail=True) == (
        f"{errors.STATION_UNAVAILABLE} (The station server 127.0.0.1:5 refused the connection; "
        "is it running on that port?)"
    )
    assert errors.station_problem(StationUnavailable(), detail=True) == errors.STATION_UNAVAILABLE
    unreadable = StationResponseError(Problem.EMPTY)
    assert user_message(unreadable) == errors.station_problem(unreadable, detail=True)
    assert user_message(unreadable) == (
        f"{errors.STATION_UNREADABLE} (The station sent an empty answer; try again later.)"
    )


def test_every_problem_has_its_own_wording_and_a_technical_line_for_logs() -> None:
    assert set(errors.STATION_DETAILS) | {Problem.WRONG_SHAPE} == set(Problem)
    timeout = StationUnavailable(Problem.TIMEOUT, server="c9.radioboss.fm")
    assert str(timeout) == "no answer in time (server: c9.radioboss.fm)"
    assert errors.station_detail(timeout) == (
        "The station server c9.radioboss.fm did not answer in time."
    )
    shape = StationResponseError(Problem.WRONG_SHAPE, what="statistics")
    assert errors.station_detail(shape) == "The station sent statistics that is not a JSON object."


def test_a_refused_address_reads_as_a_refusal_not_as_an_unreadable_answer() -> None:
    refused = StationRefused(Problem.REDIRECT_REFUSED)
    assert user_message(refused) == ("The station redirected to an address OnAir does not contact.")


def test_a_missing_value_falls_back_to_the_summary_never_to_a_crash() -> None:
    bare = StationUnavailable(Problem.TIMEOUT)  # no server named
    assert errors.station_detail(bare) == errors.STATION_UNAVAILABLE


def test_the_detail_is_said_in_the_readers_language() -> None:
    german = Translator.load().lang("de")
    refused = StationUnavailable(Problem.CONNECTION_REFUSED, server="127.0.0.1:5")
    said = errors.station_problem(refused, detail=True, lang=german)
    assert said == (
        "Der Sender antwortet gerade nicht. Versuch es in einer Minute noch mal. (Der Server des "
        "Senders 127.0.0.1:5 hat die Verbindung abgelehnt; läuft er auf diesem Port?)"
    )

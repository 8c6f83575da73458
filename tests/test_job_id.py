"""The watch job id (logged, APScheduler id) must not be an offline-guessable digest of the key."""

from __future__ import annotations

import hashlib

from bot.announcer.watcher import job_id_for
from bot.station import StationClient

BASE, STATION, KEY = "https://c5.radioboss.fm", "42", "s3cret-key"


def _common_digests() -> set[str]:
    """Every bare digest an attacker would try first: the key, the identity in common joins."""
    forms = [KEY, f"{BASE}{STATION}{KEY}"]
    for sep in ("\x00", "|", ":", ",", "/", " ", "\n", ""):
        forms.append(sep.join((BASE, STATION, KEY)))
        forms.append(sep.join((BASE.rstrip("/"), STATION, KEY)))
    out: set[str] = set()
    for form in forms:
        for name in ("sha256", "sha1", "md5", "blake2b", "sha512"):
            out.add(hashlib.new(name, form.encode()).hexdigest())
    return out


def test_job_id_is_a_keyed_hash_not_a_digest_of_the_key():
    client = StationClient(BASE, STATION, KEY)
    job_id = job_id_for(client)
    digest = job_id.removeprefix("watch:")
    assert job_id.startswith("watch:")
    assert len(digest) >= 16
    assert KEY not in job_id
    for known in _common_digests():
        assert not known.startswith(digest), "job id is a bare digest of the key"
    # Stable within a process (the scheduler finds the same watch again) ...
    assert job_id_for(StationClient(BASE, STATION, KEY)) == job_id
    # ... distinct per key ...
    assert job_id_for(StationClient(BASE, STATION, "other-key")) != job_id
    # ... and keyed: another secret gives another id.
    one = job_id_for(client, secret=b"a" * 32)
    two = job_id_for(client, secret=b"b" * 32)
    assert one != two
    assert one != job_id

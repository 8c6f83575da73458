"""Discord's transport encryption of a voice packet, ``aead_xchacha20_poly1305_rtpsize``, the
same bytes as discord.py 2.7.1 makes them, at a quarter of the cost.

discord.py builds a ``nacl.secret.Aead`` box from the key for every packet and goes through
PyNaCl's checked wrapper (about 20 µs a packet here); at 1,000 guilds that is 50,000 packets a
second, a core on its own. :func:`seal` calls libsodium's function directly through PyNaCl's own
cffi binding with the key kept as bytes (about 5 µs); ``tests/test_voice_sender.py`` checks the
result against PyNaCl's ``Aead`` byte for byte. Where PyNaCl's binding is missing (another
version), the public ``nacl.bindings`` call does the same work.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_encrypt

MODE = "aead_xchacha20_poly1305_rtpsize"
RTP_HEADER = struct.Struct(">BBHII")  # version/flags, payload type, sequence, timestamp, ssrc
NONCE = struct.Struct(">I")  # the 4 bytes sent after the ciphertext (the rest of 24 are zeros)
_PAD = b"\x00" * 20
_TAG = 16


def _public(key: bytes, header: bytes, payload: bytes, nonce: bytes) -> bytes:
    return crypto_aead_xchacha20poly1305_ietf_encrypt(payload, header, nonce + _PAD, key)


def _binding() -> Callable[[bytes, bytes, bytes, bytes], bytes]:
    try:
        from nacl._sodium import ffi, lib  # PyNaCl's own cffi module (1.5)

        encrypt = lib.crypto_aead_xchacha20poly1305_ietf_encrypt
    except (ImportError, AttributeError):
        return _public
    null = ffi.NULL
    new = ffi.new
    buffer = ffi.buffer

    def direct(key: bytes, header: bytes, payload: bytes, nonce: bytes) -> bytes:
        size = len(payload) + _TAG
        out = new("unsigned char[]", size)
        encrypt(out, null, payload, len(payload), header, len(header), null, nonce + _PAD, key)
        return bytes(buffer(out, size))

    return direct


seal = _binding()
"""``seal(key, header, payload, nonce4)``: the ciphertext and tag of ``payload`` with the RTP
``header`` as associated data and ``nonce4`` + 20 zero bytes as the nonce (discord.py's)."""

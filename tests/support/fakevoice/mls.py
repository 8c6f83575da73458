"""The MLS bytes Discord's voice gateway handles in DAVE (RFC 9420, ciphersuite 2, P-256): its
external sender package (op 25), its signed external proposals (op 27), and where a member's
commit ends and its welcome begins (op 28 carries both back to back).
"""

from __future__ import annotations

import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

MLS_10 = b"\x00\x01"  # ProtocolVersion mls10
PUBLIC_MESSAGE = b"\x00\x01"  # WireFormat mls_public_message
BASIC_CREDENTIAL = b"\x00\x01"
EXTERNAL = 2  # SenderType: the voice gateway
MEMBER = 1
PROPOSAL, COMMIT = 2, 3  # ContentType
ADD, REMOVE = b"\x00\x01", b"\x00\x03"  # ProposalType
APPEND, REVOKE = 0, 1  # op 27's operation type


def vector(data: bytes) -> bytes:
    """``data<V>``: MLS's variable-length vector (a 1, 2 or 4-byte length)."""
    size = len(data)
    if size < 1 << 6:
        return bytes([size]) + data
    if size < 1 << 14:
        return struct.pack(">H", 0x4000 | size) + data
    return struct.pack(">I", 0x80000000 | size) + data


def _read_vector(data: bytes, at: int) -> int:
    """Where the vector starting at ``at`` ends."""
    prefix = data[at] >> 6
    if prefix == 0:
        return at + 1 + (data[at] & 0x3F)
    if prefix == 1:
        return at + 2 + (int.from_bytes(data[at : at + 2], "big") & 0x3FFF)
    if prefix == 2:
        return at + 4 + (int.from_bytes(data[at : at + 4], "big") & 0x3FFFFFFF)
    raise ValueError("invalid MLS vector length")


def add(key_package: bytes) -> bytes:
    """An Add proposal for the member whose serialized KeyPackage this is."""
    return ADD + key_package


def remove(leaf: int) -> bytes:
    """A Remove proposal for the member at ``leaf``."""
    return REMOVE + struct.pack(">I", leaf)


class ExternalSender:
    """The voice gateway's MLS identity: the only one allowed to propose (DAVE)."""

    def __init__(self, identity: bytes = b"\x00" * 8) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        public = self._key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        # op 25: ExternalSender = signature_key<V>, Credential (basic, identity<V>).
        self.package = vector(public) + BASIC_CREDENTIAL + vector(identity)

    def __repr__(self) -> str:
        return "ExternalSender(<key withheld>)"

    def proposals(self, group_id: int, epoch: int, proposals: list[bytes]) -> bytes:
        """op 27's payload: append, then the proposal messages, each a PublicMessage signed by
        the external sender (no GroupContext, no membership tag: it is not a member)."""
        messages = b"".join(self._message(group_id, epoch, body) for body in proposals)
        return bytes([APPEND]) + vector(messages)

    def _message(self, group_id: int, epoch: int, proposal: bytes) -> bytes:
        content = (
            vector(struct.pack(">Q", group_id))
            + struct.pack(">QBI", epoch, EXTERNAL, 0)
            + vector(b"")  # authenticated_data
            + bytes([PROPOSAL])
            + proposal
        )
        signed = vector(b"MLS 1.0 FramedContentTBS") + vector(MLS_10 + PUBLIC_MESSAGE + content)
        signature = self._key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return MLS_10 + PUBLIC_MESSAGE + content + vector(signature)


def split_commit_welcome(data: bytes) -> tuple[bytes, bytes | None]:
    """op 28 = a commit (an MLSMessage PublicMessage from a member) and, when it adds someone,
    a Welcome right after it: where the commit ends is read from its own structure."""
    end = _commit_end(data)
    return data[:end], (data[end:] or None)


def _commit_end(data: bytes) -> int:
    if data[:4] != MLS_10 + PUBLIC_MESSAGE:
        raise ValueError("op 28 does not start with an MLS PublicMessage")
    at = _read_vector(data, 4) + 8  # group_id, epoch
    sender = data[at]
    at += 1 + (4 if sender in (MEMBER, EXTERNAL) else 0)
    at = _read_vector(data, at)  # authenticated_data
    if data[at] != COMMIT:
        raise ValueError("op 28 does not carry a commit")
    at = _read_vector(data, at + 1)  # proposals<V>
    has_path = data[at]
    at += 1
    if has_path:
        at = _leaf_node_end(data, at)
        at = _read_vector(data, at)  # nodes<V>
    at = _read_vector(data, at)  # signature
    at = _read_vector(data, at)  # confirmation_tag
    if sender == MEMBER:
        at = _read_vector(data, at)  # membership_tag
    if at > len(data):
        raise ValueError("op 28 is shorter than its commit")
    return at


def _leaf_node_end(data: bytes, at: int) -> int:
    at = _read_vector(data, at)  # encryption_key
    at = _read_vector(data, at)  # signature_key
    at += 2  # credential type (basic)
    at = _read_vector(data, at)  # identity
    for _ in range(5):  # capabilities: versions, ciphersuites, extensions, proposals, credentials
        at = _read_vector(data, at)
    source = data[at]
    at += 1
    if source == 1:  # key_package: lifetime
        at += 16
    elif source == 3:  # commit: parent_hash
        at = _read_vector(data, at)
    at = _read_vector(data, at)  # extensions
    return _read_vector(data, at)  # signature

"""Orcho's attestations checked by independent code, and the other way.

    interop.py verify ENVELOPE.json PUBLIC_HEX KEYID
        securesystemslib verifies the DSSE envelope with the raw Ed25519
        key; the payload is parsed as an in-toto Statement v1 (the
        in-toto-attestation package's protobuf definitions, validated) with
        the test-result predicate. Exit 0 when all holds.

    interop.py sign PAYLOAD_FILE OUT.json
        securesystemslib signs the payload with a new Ed25519 key; writes
        {"envelope": ..., "public_hex": ...}.
"""

import json
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from google.protobuf import json_format
from in_toto_attestation.predicates.test_result.v0 import test_result_pb2
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
from in_toto_attestation.v1.statement import Statement
from securesystemslib.dsse import Envelope
from securesystemslib.signer import CryptoSigner, SSlibKey

PAYLOAD_TYPE = "application/vnd.in-toto+json"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"


def verify(envelope_path, public_hex, keyid):
    with open(envelope_path) as f:
        envelope = Envelope.from_dict(json.load(f))
    key = SSlibKey(keyid, "ed25519", "ed25519", {"public": public_hex})
    accepted = envelope.verify([key], 1)
    assert keyid in accepted, accepted
    assert envelope.payload_type == PAYLOAD_TYPE, envelope.payload_type
    document = json.loads(envelope.payload)
    statement = Statement.copy_from_pb(
        json_format.ParseDict(document, statement_pb2.Statement())
    )
    statement.validate()
    assert statement.pb.predicate_type == TEST_RESULT, statement.pb.predicate_type
    digests = [dict(s.digest) for s in statement.pb.subject]
    assert any("gitTree" in d for d in digests), digests
    predicate = json_format.ParseDict(
        document["predicate"], test_result_pb2.TestResult(), ignore_unknown_fields=True
    )
    assert predicate.result in ("PASSED", "WARNED", "FAILED"), predicate.result
    assert len(predicate.configuration) > 0
    for descriptor in predicate.configuration:
        ResourceDescriptor.copy_from_pb(descriptor).validate()
    print("verified:", predicate.result)


def sign(payload_path, out_path):
    with open(payload_path, "rb") as f:
        payload = f.read()
    private = Ed25519PrivateKey.generate()
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    key = SSlibKey("independent", "ed25519", "ed25519", {"public": raw.hex()})
    envelope = Envelope(payload, PAYLOAD_TYPE, {})
    envelope.sign(CryptoSigner(private, key))
    with open(out_path, "w") as f:
        json.dump({"envelope": envelope.to_dict(), "public_hex": raw.hex()}, f)
    print("signed")


if __name__ == "__main__":
    if sys.argv[1] == "verify":
        verify(*sys.argv[2:5])
    elif sys.argv[1] == "sign":
        sign(*sys.argv[2:4])
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")

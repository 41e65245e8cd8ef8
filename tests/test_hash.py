"""The cell source hash is the same in Python and in the lab extension (shared vectors)."""

from __future__ import annotations

import pytest

from jupyter_copilot.page.context import source_hash
from tests.conftest import load_json
from tests.node_harness import run_node

VECTORS = load_json("hash_vectors.json")


def expand(vector: dict) -> str:
    """The source a vector describes."""
    if "source" in vector:
        return vector["source"]
    return vector["repeat"]["unit"] * vector["repeat"]["times"]


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_python_hash_matches_shared_vector(vector: dict) -> None:
    source = expand(vector)
    assert len(source.encode("utf-8")) == vector["utf8Bytes"]
    assert source_hash(source) == vector["hash"]


def test_vectors_include_a_source_of_at_least_100_kb() -> None:
    assert max(v["utf8Bytes"] for v in VECTORS["vectors"]) >= 100 * 1024


def test_nbformat_line_lists_hash_like_the_joined_source() -> None:
    assert source_hash(["a = 1\n", "b = 2"]) == source_hash("a = 1\nb = 2")


def test_crlf_and_unicode_forms_are_not_normalised() -> None:
    assert source_hash("a\r\n") != source_hash("a\n")
    assert source_hash("cafe\u0301") != source_hash("caf\u00e9")


@pytest.mark.parametrize("source", VECTORS["unencodable"])
def test_lone_surrogates_have_no_hash(source: str) -> None:
    assert source_hash(source) is None


def test_typescript_hash_matches_every_shared_vector() -> None:
    script = """
const { sourceHash } = await import(LIB + '/hash.js');
const expand = v => 'source' in v ? v.source : v.repeat.unit.repeat(v.repeat.times);
const out = {
  vectors: input.vectors.map(v => sourceHash(expand(v))),
  unencodable: input.unencodable.map(s => sourceHash(s)),
};
process.stdout.write(JSON.stringify(out));
"""
    out = run_node(script, VECTORS)
    assert out["vectors"] == [v["hash"] for v in VECTORS["vectors"]]
    assert out["unencodable"] == [None] * len(VECTORS["unencodable"])

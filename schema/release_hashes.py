"""The content hashes of the canonical release, per family.

`content_hash` (see `mathbode.core.hashing`) of each family's rows as the canonical builder makes
them. The scorer's default reference is checked against these, and a test checks them against
dist/MANIFEST.json: a change to a family that changes its rows must change its version and its
hash here together. They live beside the layout so that every room (validator, evaluator,
runner) can see them without importing the builder.
"""

from mathbode.core.digests import combined_hash

RELEASE_CONTENT_HASHES = {
    "linear_solve": "sha256:d4398207c969153b406a5a32c37f7ed3ad616d3ee7bf809e047ebd427792fb6f",
    "ratio_saturation": "sha256:b38f341a1cbb42d4bacdbacc694abc3cbe8b1884a5a50270ee5d04f03173b799",
    "exponential_interest": "sha256:fcc97446cfe7036706897f7f5e751a7420a287723df9c9e7146ac2ec3719dc3f",
    "linear_system": "sha256:037a5e2d5a1927cfa5084392ec4c03d98dfc5e17a4b523cd56ae5977b4dac9a1",
    "similar_triangles": "sha256:fdd860d952ac8450ed7f1805d2be95ad84305b363666a5c67e7d3b8496fc111c",
}

#: Each canonical family's version, as the canonical release records it: what describes a
#: canonical family without the builder (`schema.description`). A test checks them against the
#: builder's families and dist/MANIFEST.json.
RELEASE_FAMILY_VERSIONS = {
    "linear_solve": "1.0.0",
    "ratio_saturation": "1.0.0",
    "exponential_interest": "1.0.0",
    "linear_system": "1.0.0",
    "similar_triangles": "1.0.0",
}

#: The sha256 of each committed parquet file's bytes (dist/data, shipped in the package). The
#: packaged rows whose bytes have these hashes are the canonical content without hashing every
#: column (0.14 s); rows written by another pyarrow (other bytes, same content) are checked by
#: their content hash instead. A test checks these against the committed files.
RELEASE_FILE_SHA256 = {
    "linear_solve": "9ae491df48162fffa27f4b39f7bdd1b79e6cd42562ac072d1d6fe1b7bd94ca39",
    "ratio_saturation": "275f47f5db63728c7e2e3f7b5e22ec72f25c2fea85d63ca8eee57de02a9c3d71",
    "exponential_interest": "8225d4695c49fa9cae311dfe95655a2f21f7f32a0a8786f0ad8e9cc5bf95225b",
    "linear_system": "2166bbb5cb022aa36f6f13d7e8051dab52053fa13783f8213b6d5577fcc79bbe",
    "similar_triangles": "0c2956f136af15ee812704fb0e6ae75079004965194a9cba5651b47a012225ab",
}


#: The canonical release's split identity (MANIFEST.json `prompts_hash`): the hash of its prompts,
#: which every submission answered on it records (`schema.splits`). A test checks it against dist/.
RELEASE_PROMPTS_HASH = "sha256:df5b51618b11a8fbf801a240966aa33368e45e883f5fe680968c058deaaad834"


def release_content_hash() -> str:
    """The canonical release's `content_hash` (as in its MANIFEST.json), from the families' hashes in layout order."""
    return combined_hash(list(RELEASE_CONTENT_HASHES.values()))

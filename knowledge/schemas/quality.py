"""Schema of `GET /workspaces/{slug}/quality` (knowledge/api/quality.py), which is also what
`manage.py quality --json` prints: one definition for both. Every field listed."""

from __future__ import annotations

from ninja import Field, Schema


class QualityShare(Schema):
    count: int
    total: int
    share: float | None = Field(..., description="count / total, 0 to 1; null when total is 0")


class QualitySource(Schema):
    id: int
    name: str


class SuspiciousName(Schema):
    id: int = Field(..., description="the entity")
    name: str
    type: str
    state: str
    mentions: int = Field(..., description="mentions (in the source's chunks, with `source`)")
    reason: str | None = Field(
        ..., description="why the name looks like noise although the extractor let it through"
    )


class QualityOut(Schema):
    workspace: str
    source: QualitySource | None = Field(..., description="the source reported on, if one")
    entities: int = Field(..., description="active entities (with `source`: that it mentions)")
    mentions: int = Field(..., description="their mentions (with `source`: in its chunks)")
    relations: int = Field(..., description="active relations (with `source`: it evidences)")
    chunks: int
    words: int = Field(..., description="words of the chunks extraction reads (no boilerplate)")
    in_two_or_more_chunks: QualityShare = Field(..., description="entities seen in 2+ chunks")
    singletons: QualityShare = Field(..., description="entities with exactly one mention")
    orphans: QualityShare = Field(
        ...,
        description="entities with no active relation (with `source`: none it evidences)",
    )
    entities_per_1000_words: float | None = Field(
        ..., description="entities per 1,000 words; null without words"
    )
    typed_relations: QualityShare = Field(
        ..., description="relations whose type is not the fallback related_to"
    )
    boilerplate_chunks: QualityShare = Field(
        ..., description="chunks marked boilerplate (never extracted) among all chunks"
    )
    suspicious: list[SuspiciousName] = Field(
        ...,
        description="up to 20 active entities whose name the noise filter nearly rejected, "
        "most mentioned first",
    )


class SectionLabelOut(Schema):
    key: str = Field(..., description="what headings and extracted names are compared on")
    text: str = Field(..., description="the label as the source's headings (or a person) spell it")
    documents: int = Field(
        ..., description="documents of the source it heads a section in (0: not learnt)"
    )
    learnt: bool = Field(..., description="the source's counts make it structure")
    override: bool | None = Field(
        ..., description="a person's word: true structure, false not structure, null none"
    )
    structure: bool = Field(
        ..., description="what extraction does: true makes no entity of it in this source"
    )


class SectionLabelsOut(Schema):
    source: QualitySource
    min_documents: int = Field(..., description="a label heads a section in at least this many")
    min_share: float = Field(..., description="and at least this share of the documents")
    labels: list[SectionLabelOut] = Field(..., description="learnt ones most common first")


class SectionLabelIn(Schema):
    label: str = Field(..., max_length=80)
    structure: bool | None = Field(
        ..., description="true: structure; false: not structure; null: back to the counts"
    )

"""The graph's tables: the schema registry, entities and relations, their evidence, and the
extraction runs and LLM calls that produced it."""

from knowledge.models.communities import (
    Community,
    CommunityLink,
    CommunityRun,
    CommunitySummary,
)
from knowledge.models.curation import (
    Alias,
    AliasOrigin,
    CurationAction,
    CurationEvent,
    CurationRule,
    MergeSuggestion,
    RelationNote,
    RelationRule,
    RuleKind,
    SuggestionStatus,
)
from knowledge.models.extraction import (
    ExtractionRun,
    ExtractionStatus,
    Extractor,
    LlmCall,
    SourceExtraction,
)
from knowledge.models.graph import (
    ENTITY_VECTORS,
    Entity,
    EntityState,
    Mention,
    Relation,
    RelationEvidence,
)
from knowledge.models.schema import EntityType, RelationType, TypeOrigin, TypeStatus
from knowledge.models.search import EntityWord, WordTypoKey
from knowledge.models.structure import SectionLabelOverride

__all__ = [
    "ENTITY_VECTORS",
    "Alias",
    "AliasOrigin",
    "Community",
    "CommunityLink",
    "CommunityRun",
    "CommunitySummary",
    "CurationAction",
    "CurationEvent",
    "CurationRule",
    "Entity",
    "EntityState",
    "EntityType",
    "EntityWord",
    "ExtractionRun",
    "ExtractionStatus",
    "Extractor",
    "LlmCall",
    "Mention",
    "MergeSuggestion",
    "Relation",
    "RelationEvidence",
    "RelationNote",
    "RelationRule",
    "RelationType",
    "RuleKind",
    "SectionLabelOverride",
    "SourceExtraction",
    "SuggestionStatus",
    "TypeOrigin",
    "TypeStatus",
    "WordTypoKey",
]

"""Entities, relations and the evidence they are derived from.

Provenance is a table: a `Mention` ties an entity to the chunk and characters where it
occurs, a `RelationEvidence` does the same for a relation, each with the extraction run that
produced it. Counts, weights and descriptions on Entity and Relation are derived from those
rows, so deleting or re-extracting a document changes exactly what it touched. Character
offsets are offsets into the document's text (chunks overlap, document offsets do not
depend on which chunk holds them); null offsets mean window-level evidence whose exact
place could not be found.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Func, Q
from pgvector.django import VectorField

from ingest.vector_tables import VectorTable
from knowledge.models.extraction import ExtractionRun
from knowledge.models.schema import EntityType, RelationType
from workspaces.models import WorkspaceScopedModel


class EntityState(models.TextChoices):
    ACTIVE = "active", "Active"
    MERGED = "merged", "Merged"
    DELETED = "deleted", "Deleted"


class Entity(WorkspaceScopedModel):
    name = models.CharField(max_length=300)
    # The key entities are matched on (see knowledge/canonical.py).
    canonical_name = models.CharField(max_length=300)
    type = models.ForeignKey(EntityType, on_delete=models.PROTECT, related_name="entities")
    # How often the extractor gave each type to the entity's mentions ({type name: count}).
    # The type follows the majority of these votes unless a person set it (`type_curated`).
    type_votes = models.JSONField(default=dict, blank=True)
    type_curated = models.BooleanField(default=False)
    # Set by the communities task (knowledge/graph/communities.py): explorer colouring and
    # community summaries. Null until computed (or for an entity added since).
    community = models.IntegerField(null=True, blank=True, db_index=True)
    # Inside a community larger than COMMUNITY_SPLIT_ABOVE, its sub-community (the same task,
    # the community map's second level); null in the others and until computed.
    subcommunity = models.IntegerField(null=True, blank=True)
    # How often retrieval returned it (prune and "popular" views read these).
    retrieved_count = models.PositiveIntegerField(default=0)
    last_retrieved_at = models.DateTimeField(null=True, blank=True)
    description = models.TextField(blank=True)
    # With an LLM: a summary of the description fragments once there are many, and the hash
    # of the fragments it was made from (it is reused while they stay the same).
    summary = models.TextField(blank=True)
    summary_hash = models.CharField(max_length=64, blank=True)
    aliases = models.JSONField(default=list, blank=True)
    # The name's embedding (consolidation's nearest-neighbour tier); any dimension, an HNSW
    # index per dimension as for chunks.
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    embedding_dim = models.PositiveSmallIntegerField(null=True, blank=True)
    mention_count = models.PositiveIntegerField(default=0)
    # Active relations touching it, a self-loop once. Kept by PostgreSQL itself (triggers on
    # knowledge_relation, migration 0013) so every write path, bulk or raw, keeps it exact;
    # a write of a stale value (a save() of an instance read before its relations changed)
    # is ignored by the database. Graph traversal ranks on it and hubs read it from an index
    # instead of counting relations per entity.
    degree = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    # Derived from evidence: the sources whose documents mention it.
    source_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    first_seen_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    properties = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=EntityState.choices, default=EntityState.ACTIVE)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Keys that similar names share (knowledge/consolidation/names/blocking.py): candidate blocking
    # for fuzzy matching, one GIN-indexed `&&` instead of comparing with every entity.
    blocking_keys = ArrayField(models.CharField(max_length=80), default=list, blank=True)
    # A person has decided something about it: it stays even when its evidence goes.
    curated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "entities"
        constraints = [
            # Two workers extracting the same name at once create one entity.
            models.UniqueConstraint(
                fields=["workspace", "type", "canonical_name"],
                condition=Q(state="active"),
                name="entity_unique_active_name",
            )
        ]
        indexes = [
            models.Index(fields=["workspace", "canonical_name"], name="entity_ws_canon"),
            # Hubs (overall and of one type), degree ordering and min_degree on the list.
            models.Index(
                F("workspace"),
                F("degree").desc(),
                F("mention_count").desc(),
                "id",
                condition=Q(state="active"),
                name="entity_ws_degree",
            ),
            models.Index(
                F("type"),
                F("degree").desc(),
                F("mention_count").desc(),
                "id",
                condition=Q(state="active"),
                name="entity_type_degree",
            ),
            # "Entities a source mentions" (the entities list's source filter).
            GinIndex(fields=["source_ids"], name="entity_source_ids"),
            # The blocking keys prefixed with the type id ("121:smith"), so one GIN lookup
            # finds the entities of one workspace's type sharing a key without reading the
            # other types' and workspaces' (a common word is in thousands of names). The SQL
            # function is created by migration 0009. Without GIN's pending list
            # (fastupdate): consolidation reads this index right after writing it, and every
            # lookup scanned the whole unmerged list (migration 0021).
            GinIndex(
                Func(
                    F("type_id"),
                    F("blocking_keys"),
                    function="knowledge_scoped_keys",
                    output_field=ArrayField(models.TextField()),
                ),
                name="entity_scoped_blocking_keys",
                condition=Q(state="active"),
                fastupdate=False,
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Relation(WorkspaceScopedModel):
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="outgoing")
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="incoming")
    type = models.ForeignKey(RelationType, on_delete=models.PROTECT, related_name="relations")
    description = models.TextField(blank=True)
    keywords = models.JSONField(default=list, blank=True)
    weight = models.FloatField(default=0.0)
    evidence_count = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=16, choices=EntityState.choices, default=EntityState.ACTIVE)
    # A duplicate edge folded into another by a merge (restored by unmerge).
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A person changed or added it (knowledge/actions/curation/relations.py): it stays when
    # its extracted evidence goes; `description_curated`: evidence no longer rewrites the
    # description a person wrote.
    curated = models.BooleanField(default=False)
    description_curated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "source", "target", "type"],
                condition=Q(state="active"),
                name="relation_unique_active_edge",
            )
        ]
        indexes = [
            models.Index(fields=["source", "type"], name="relation_source_type"),
            models.Index(fields=["target", "type"], name="relation_target_type"),
            # Graph traversal (knowledge/graph/postgres.py) walks active edges from either
            # end; these answer each step, and the edges among the nodes found, from the
            # index alone.
            models.Index(
                fields=["source"],
                include=["target", "type", "weight", "id", "workspace"],
                condition=Q(state="active"),
                name="relation_active_out",
            ),
            # The relations list, heaviest first.
            models.Index(
                F("workspace"),
                F("weight").desc(),
                "id",
                condition=Q(state="active"),
                name="relation_ws_weight",
            ),
            models.Index(
                fields=["target"],
                include=["source", "type", "weight", "id", "workspace"],
                condition=Q(state="active"),
                name="relation_active_in",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.type_id}-> {self.target_id}"


# Active entities' name vectors: the shared HNSW index per dimension
# (`entity_embedding_hnsw_<dim>`, WHERE state = 'active') and workspaces' own ones (the
# `vector_indexes` upkeep job, knowledge/hooks.py; ingest/actions/vector_indexes.py).
ENTITY_VECTORS = VectorTable("knowledge_entity", "entity_embedding_hnsw", "state = 'active'")


class Mention(WorkspaceScopedModel):
    # The busiest table: no index the constraints and indexes below already provide
    # (entity: mention_entity_time; run: mention_unique_place).
    entity = models.ForeignKey(
        Entity, on_delete=models.CASCADE, related_name="mentions", db_index=False
    )
    chunk = models.ForeignKey("ingest.Chunk", on_delete=models.CASCADE, related_name="mentions")
    run = models.ForeignKey(
        ExtractionRun, on_delete=models.CASCADE, related_name="mentions", db_index=False
    )
    surface_form = models.CharField(max_length=300)
    # The registry type the extractor gave this mention: the entity's type is a vote over them.
    extracted_type = models.CharField(max_length=100, blank=True)
    char_start = models.PositiveIntegerField(null=True, blank=True)
    char_end = models.PositiveIntegerField(null=True, blank=True)
    # What the extractor said about the entity here: the fragments descriptions come from.
    description = models.TextField(blank=True)
    # That description is the name's own definition (a glossary or API entry's, as the
    # offline extractor reads them): an entity's description puts these first.
    defines = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chunk", "char_start"]
        constraints = [
            # Materialising the same run twice (a resumed task) adds nothing.
            models.UniqueConstraint(
                fields=["run", "chunk", "entity", "char_start"],
                nulls_distinct=False,
                name="mention_unique_place",
            )
        ]
        indexes = [
            models.Index(fields=["entity", "created_at"], name="mention_entity_time"),
            # Retrieval's graph signal: the chunks that mention an entity, from the index.
            models.Index(
                fields=["entity"], include=["chunk", "workspace"], name="mention_entity_chunk"
            ),
        ]

    @property
    def located(self) -> bool:
        return self.char_start is not None


class RelationEvidence(WorkspaceScopedModel):
    relation = models.ForeignKey(
        Relation, on_delete=models.CASCADE, related_name="evidence", db_index=False
    )
    chunk = models.ForeignKey(
        "ingest.Chunk", on_delete=models.CASCADE, related_name="relation_evidence"
    )
    run = models.ForeignKey(
        ExtractionRun, on_delete=models.CASCADE, related_name="relation_evidence", db_index=False
    )
    char_start = models.PositiveIntegerField(null=True, blank=True)
    char_end = models.PositiveIntegerField(null=True, blank=True)
    description = models.TextField(blank=True)
    keywords = models.JSONField(default=list, blank=True)
    strength = models.FloatField(default=5.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chunk", "char_start"]
        verbose_name_plural = "relation evidence"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "chunk", "relation", "char_start"],
                nulls_distinct=False,
                name="relationevidence_unique_place",
            )
        ]
        # Newest evidence of a relation first (the relation page); also serves "by relation".
        indexes = [models.Index(fields=["relation", "-created_at"], name="relevidence_rel_time")]

    @property
    def located(self) -> bool:
        return self.char_start is not None

"""Entity consolidation: deciding which extracted names of one type are the same entity."""

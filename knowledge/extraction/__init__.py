"""Entity and relation extraction: windows, the model-output parser, name validation and
the offline extractor (the prompts are knowledge/prompts/, the LLM client system/llm/).
Nothing here writes to the database; knowledge/actions/extraction/ turns results into
rows."""

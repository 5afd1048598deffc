"""Entity and relation extraction: windows, prompts, the LLM client, the model-output
parser, name validation and the offline extractor. Nothing here writes to the database;
knowledge/actions/extraction.py turns results into rows."""

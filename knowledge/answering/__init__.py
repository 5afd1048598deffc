"""Grounded answers from retrieved passages: the prompts (document text framed and bounded
as data), the citations ([n] markers checked against the passages and mapped to evidence
spans), the guard that keeps the system prompt out of answers, and the server-sent event
format. Pure engine: no HTTP, no database, no LLM calls (knowledge/actions/ask.py makes
them)."""

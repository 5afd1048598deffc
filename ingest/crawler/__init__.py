"""Django-independent building blocks for crawling websites: URL normalisation and scope,
an SSRF-guarded fetcher, robots.txt, sitemaps, link extraction and per-host rate limiting.

Nothing here reads Django settings; the crawl loop passes them in, so these pieces can be
tested (and reasoned about) on their own.
"""
